import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllowList } from './addresses.js';
import { HostUnresolvedError, UrlRefusedError } from './errors.js';
import { pinnedLookup, staticUrlRefusal, vetUrl, vetUrlStatic, type HostLookup } from './guard.js';

/** A resolver that must not be asked (IP literals and localhost are judged without DNS). */
const noLookup: HostLookup = () => Promise.reject(new Error('the resolver must not be asked'));
const answers =
  (...addresses: string[]): HostLookup =>
  () =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

async function refusal(url: string, opts: Parameters<typeof vetUrl>[1] = { allow: [], lookup: noLookup }): Promise<UrlRefusedError> {
  const err = await vetUrl(url, opts).catch((e: unknown) => e);
  expect(err, url).toBeInstanceOf(UrlRefusedError);
  return err as UrlRefusedError;
}

describe('vetUrl', () => {
  it.each([
    ['http://127.0.0.1:9/', '127.0.0.1 is an internal address (loopback (127.0.0.0/8))'],
    ['http://2130706433/', '127.0.0.1 is an internal address (loopback'],
    ['http://0177.0.0.1/', '127.0.0.1 is an internal address (loopback'],
    ['http://0x7f.0.0.1/', '127.0.0.1 is an internal address (loopback'],
    ['http://127.1/', '127.0.0.1 is an internal address (loopback'],
    ['http://localhost/', 'localhost resolves to 127.0.0.1, which is an internal address (loopback'],
    ['http://Api.LocalHost./', 'resolves to 127.0.0.1'],
    ['http://[::1]/', '::1 is an internal address (loopback (::1))'],
    ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped form of 127.0.0.1: loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local / cloud metadata (169.254.0.0/16)'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'NAT64 form of 169.254.169.254'],
    ['https://192.168.0.10:8443/', 'private (192.168.0.0/16)'],
  ])('refuses %s with PERMISSION_DENIED, saying why', async (url, why) => {
    const err = await refusal(url);
    expect(err.code).toBe('PERMISSION_DENIED');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/^Refused to fetch /);
    expect(err.message).toContain(why);
  });

  it('words the refusal for its caller', async () => {
    const err = await vetUrl('http://127.0.0.1:9/', { allow: [] }, { what: 'deliver a webhook to', policy: 'Ask an operator.' }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'Refused to deliver a webhook to http://127.0.0.1:9/: 127.0.0.1 is an internal address (loopback (127.0.0.0/8)). Ask an operator.',
    );
  });

  it.each([
    ['ftp://example.com/', 'only http and https URLs are supported'],
    ['file:///etc/passwd', 'only http and https URLs are supported'],
    ['http://user:secret@example.com/', 'credentials in the URL are not supported'],
    ['not a url', 'Invalid URL: not a url'],
  ])('refuses %s with INVALID_ARGUMENT', async (url, why) => {
    const err = await refusal(url);
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain(why);
  });

  it('refuses a name resolving to a private address, and a name with one private answer among public ones', async () => {
    expect((await refusal('https://hooks.example.com/', { allow: [], lookup: answers('10.0.0.7') })).message).toContain(
      'hooks.example.com resolves to 10.0.0.7, which is an internal address (private (10.0.0.0/8))',
    );
    expect((await refusal('https://mixed.example/', { allow: [], lookup: answers('93.184.216.34', 'fd00::1') })).message).toContain(
      'mixed.example resolves to fd00::1',
    );
  });

  it('returns the first resolved address, the host as written and the default port', async () => {
    const target = await vetUrl('https://hooks.example.com/x?y=1', { allow: [], lookup: answers('93.184.216.34', '2606:2800:220:1::1') });
    expect(target).toMatchObject({ host: 'hooks.example.com', port: 443, address: '93.184.216.34', family: 4 });
    expect(target.url.search).toBe('?y=1');
    expect(await vetUrl('http://[2606:4700:4700::1111]/', { allow: [] })).toMatchObject({ host: '2606:4700:4700::1111', port: 80, family: 6 });
  });

  it('lets an allow entry through only for its host/address and port', async () => {
    const allow = parseAllowList('127.0.0.1:8080, hooks.internal');
    await expect(vetUrl('http://127.0.0.1:8080/', { allow })).resolves.toMatchObject({ address: '127.0.0.1' });
    expect((await refusal('http://127.0.0.1:8081/', { allow })).code).toBe('PERMISSION_DENIED');
    await expect(vetUrl('http://hooks.internal:9000/', { allow, lookup: answers('10.2.3.4') })).resolves.toMatchObject({ address: '10.2.3.4', port: 9000 });
    expect((await refusal('http://other.internal/', { allow, lookup: answers('10.2.3.4') })).message).toContain('other.internal resolves to 10.2.3.4');
  });

  it('throws HostUnresolvedError (retryable, NOT_FOUND) when the name does not resolve', async () => {
    const failing: HostLookup = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }));
    const err = await vetUrl('https://nowhere.invalid/', { allow: [], lookup: failing }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostUnresolvedError);
    expect(err).toMatchObject({ code: 'NOT_FOUND', retryable: true, message: 'Could not resolve host nowhere.invalid (ENOTFOUND)' });
    await expect(vetUrl('https://empty.example/', { allow: [], lookup: answers() })).rejects.toBeInstanceOf(HostUnresolvedError);
    await expect(vetUrl('https://odd.example/', { allow: [], lookup: answers('not-an-ip') })).rejects.toBeInstanceOf(HostUnresolvedError);
  });
});

describe('vetUrlStatic / staticUrlRefusal', () => {
  it.each([
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://[::ffff:127.0.0.1]/',
    'http://localhost:3000/',
    'http://169.254.169.254/',
    'ftp://example.com/',
    'http://u:p@example.com/',
    'nope',
  ])('refuses %s without DNS', (url) => {
    expect(() => vetUrlStatic(url, [])).toThrow(UrlRefusedError);
    expect(staticUrlRefusal(url, [])).toEqual(expect.any(String));
  });

  it('passes host names (judged when used) and allowed literals', () => {
    expect(staticUrlRefusal('https://does-not-exist.invalid/hook', [])).toBeUndefined();
    expect(staticUrlRefusal('http://127.0.0.1:9999/hook', parseAllowList('127.0.0.1:9999'))).toBeUndefined();
    expect(staticUrlRefusal('http://127.0.0.1:9998/hook', parseAllowList('127.0.0.1:9999'))).toContain('loopback');
  });

  it('says the same as vetUrl for a literal', async () => {
    const wording = { what: 'deliver a webhook to', policy: 'Public only.' };
    const dynamic = await vetUrl('http://[::1]:8080/x', { allow: [] }, wording).catch((e: unknown) => (e as Error).message);
    expect(staticUrlRefusal('http://[::1]:8080/x', [], wording)).toBe(dynamic);
  });
});

describe('pinnedLookup', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('answers the vetted address in both callback shapes', () => {
    const lookup = pinnedLookup({ address: '203.0.113.9', family: 4 });
    const one: unknown[] = [];
    lookup('anything.example', {}, (...args: unknown[]) => one.push(...args));
    expect(one).toEqual([null, '203.0.113.9', 4]);
    const all: unknown[] = [];
    lookup('anything.example', { all: true }, (...args: unknown[]) => all.push(...args));
    expect(all).toEqual([null, [{ address: '203.0.113.9', family: 4 }]]);
  });

  it('makes http.request connect to the vetted address whatever the name, keeping the name in Host', async () => {
    const hosts: (string | undefined)[] = [];
    server = http.createServer((req, res) => {
      hosts.push(req.headers.host);
      res.end('ok');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    // `.invalid` never resolves (RFC 6761): the request only arrives if the lookup is pinned.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { hostname: 'pinned.invalid', port, path: '/', agent: false, lookup: pinnedLookup({ address: '127.0.0.1', family: 4 }) },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(hosts).toEqual([`pinned.invalid:${port}`]);
  });
});
