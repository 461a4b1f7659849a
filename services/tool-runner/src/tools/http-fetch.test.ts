import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowList } from '@agentloop/net';
import { createToolHarness, type ToolHarness } from '../testing/index.js';
import { createHttpFetchTool, vetUrl, type HostLookup, type HttpFetchOptions } from './http-fetch.js';

// Every server here listens on 127.0.0.1; no test sends traffic anywhere else.
// Non-loopback literals are checked with vetUrl, which never connects.

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function startServer(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  return new Promise<{ server: http.Server; port: number; seen: Seen[] }>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, seen }));
  });
}

let main: Awaited<ReturnType<typeof startServer>>;
/** A second loopback server that no allow entry covers: it must never be reached. */
let other: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  other = await startServer((_req, res) => res.end('you should not see this'));
  main = await startServer((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const redirect = (to: string, status = 302) => {
      res.writeHead(status, { location: to });
      res.end();
    };
    switch (url.pathname) {
      case '/text':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('hello wörld');
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('a'.repeat(5_000));
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.from('z'.repeat(100_000))));
        return;
      case '/binary':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
        return;
      case '/untyped-binary':
        res.end(Buffer.from([1, 2, 0, 3]));
        return;
      case '/echo':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null, custom: req.headers['x-custom'] ?? null }));
        return;
      case '/status404':
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such page');
        return;
      case '/slow':
        // Never answers: the fetch must give up on its own.
        return;
      case '/to-text':
        redirect('/text');
        return;
      case '/see-other':
        redirect('/echo', 303);
        return;
      case '/to-other-port':
        redirect(`http://127.0.0.1:${other.port}/`);
        return;
      case '/to-localhost':
        redirect(`http://localhost:${main.port}/text`);
        return;
      case '/to-file':
        redirect('file:///etc/passwd');
        return;
      case '/to-decimal':
        redirect(`http://2130706433:${other.port}/`);
        return;
      case '/loop':
        redirect(`/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}`);
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
});

afterAll(async () => {
  await new Promise((r) => main.server.close(r));
  await new Promise((r) => other.server.close(r));
});

let h: ToolHarness | undefined;
afterEach(async () => {
  await h?.[Symbol.asyncDispose]();
  h = undefined;
});

/** A harness with http_fetch; `127.0.0.1:<main port>` is allowed unless `allow` says otherwise. */
async function fetcher(opts: Partial<HttpFetchOptions> & { allowText?: string } = {}) {
  h = await createToolHarness();
  const { allowText, ...rest } = opts;
  h.registry.register(createHttpFetchTool({ allow: parseAllowList(allowText ?? `127.0.0.1:${main.port}`), maxBytes: 1_000, timeoutMs: 10_000, ...rest }));
  const harness = h;
  return (args: Record<string, unknown>) => harness.call('http_fetch', args);
}

const noLookup: HostLookup = () => Promise.reject(new Error('no DNS in this test'));

describe('http_fetch', () => {
  it('returns the status, content type and text of an allowed server', async () => {
    const fetch = await fetcher();
    const res = await fetch({ url: `http://127.0.0.1:${main.port}/text` });
    expect(res.error).toBeUndefined();
    expect(res.content).toBe('HTTP 200 OK\nContent-Type: text/plain; charset=utf-8\n\nhello wörld');
  });

  it('returns a non-2xx status as a result, not a failure', async () => {
    const fetch = await fetcher();
    const res = await fetch({ url: `http://127.0.0.1:${main.port}/status404` });
    expect(res.error).toBeUndefined();
    expect(res.content).toMatch(/^HTTP 404 Not Found\n[\s\S]*no such page$/);
  });

  it('sends the method, body and headers', async () => {
    const fetch = await fetcher();
    const res = await fetch({ url: `http://127.0.0.1:${main.port}/echo`, method: 'POST', body: '{"a":1}', headers: { 'X-Custom': 'yes' } });
    expect(JSON.parse(res.content.split('\n\n')[1] ?? '')).toEqual({ method: 'POST', body: '{"a":1}', auth: null, custom: 'yes' });
  });

  it('is idempotent for GET and HEAD only', async () => {
    const fetch = await fetcher();
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/text` })).idempotent).toBe(true);
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/text`, method: 'HEAD' })).idempotent).toBe(true);
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/echo`, method: 'POST', body: 'x' })).idempotent).toBe(false);
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/echo`, method: 'DELETE' })).idempotent).toBe(false);
  });

  it('refuses a body with GET', async () => {
    const fetch = await fetcher();
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/echo`, body: 'x' })).content).toBe(
      'Error: A GET request cannot have a body; use POST, PUT or PATCH',
    );
  });

  it('cuts a text body at the size limit with a note', async () => {
    const fetch = await fetcher();
    const res = await fetch({ url: `http://127.0.0.1:${main.port}/big` });
    const [, body = ''] = res.content.split('\n\n');
    expect(body).toBe('a'.repeat(1_000));
    expect(res.content).toContain('[Truncated: the response is larger than 1000 bytes; only the first 1000 bytes are shown.]');
  });

  it('lets max_bytes lower the limit but not raise it', async () => {
    const fetch = await fetcher();
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/big`, max_bytes: 10 })).content).toContain(
      `\n\n${'a'.repeat(10)}\n\n[Truncated: the response is larger than 10 bytes`,
    );
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/big`, max_bytes: 1_000_000 })).content).toContain('larger than 1000 bytes');
  });

  it('counts the limit on the decompressed body', async () => {
    const fetch = await fetcher();
    const res = await fetch({ url: `http://127.0.0.1:${main.port}/gzip` });
    expect(res.content).toContain(`\n\n${'z'.repeat(1_000)}\n\n[Truncated`);
  });

  it('summarizes binary content instead of returning it', async () => {
    const fetch = await fetcher();
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/binary` })).content).toBe(
      'HTTP 200 OK\nContent-Type: image/png\n\n[Binary content (image/png), 12 bytes; not shown. http_fetch returns text only.]',
    );
    expect((await fetch({ url: `http://127.0.0.1:${main.port}/untyped-binary` })).content).toContain('[Binary content (unknown type), 4 bytes');
  });

  it('gives up after its timeout on a server that never answers', async () => {
    const fetch = await fetcher({ timeoutMs: 300 });
    const res = await fetch({ url: `http://127.0.0.1:${main.port}/slow` });
    expect(res.error?.code).toBe('TIMEOUT');
    expect(res.content).toBe(`Error: http_fetch: no complete response from http://127.0.0.1:${main.port} within 300 ms`);
  });

  it('refuses schemes other than http and https', async () => {
    const fetch = await fetcher();
    expect((await fetch({ url: 'file:///etc/passwd' })).content).toBe('Error: Refused to fetch file:///etc/passwd: only http and https URLs are supported');
    expect((await fetch({ url: 'gopher://127.0.0.1:70/' })).content).toContain('only http and https URLs are supported');
  });

  it('refuses credentials in the URL', async () => {
    const fetch = await fetcher();
    expect((await fetch({ url: `http://u:p@127.0.0.1:${main.port}/text` })).content).toContain('credentials in the URL are not supported');
  });

  describe('SSRF guard', () => {
    it.each([
      ['decimal', (p: number) => `http://2130706433:${p}/`],
      ['octal', (p: number) => `http://0177.0.0.1:${p}/`],
      ['hex', (p: number) => `http://0x7f000001:${p}/`],
      ['dotted hex', (p: number) => `http://0x7f.0.0.1:${p}/`],
      ['short form', (p: number) => `http://127.1:${p}/`],
      ['IPv4-mapped IPv6', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
      ['IPv6 loopback', (p: number) => `http://[::1]:${p}/`],
      ['localhost with a trailing dot', (p: number) => `http://localhost.:${p}/`],
      ['upper-case localhost', (p: number) => `http://LOCALHOST:${p}/`],
      ['a .localhost subdomain', (p: number) => `http://api.localhost:${p}/`],
    ])('refuses a loopback address written in %s form and never connects', async (_form, url) => {
      const fetch = await fetcher({ allowText: '', lookup: noLookup });
      const before = other.seen.length;
      const res = await fetch({ url: url(other.port) });
      expect(res.error?.code).toBe('PERMISSION_DENIED');
      expect(res.content).toMatch(/^Error: Refused to fetch .*: .*is an internal address \((IPv4-mapped form of 127\.0\.0\.1: )?loopback/);
      expect(other.seen.length).toBe(before);
    });

    it('refuses a host name that resolves to 127.0.0.1', async () => {
      const fetch = await fetcher({ allowText: '', lookup: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]) });
      const res = await fetch({ url: `http://innocent.example:${other.port}/` });
      expect(res.content).toBe(
        `Error: Refused to fetch http://innocent.example:${other.port}/: innocent.example resolves to 127.0.0.1, which is an internal address (loopback (127.0.0.0/8)). http_fetch only reaches public addresses.`,
      );
      expect(other.seen).toHaveLength(0);
    });

    it('refuses a host name with one internal address among public ones', async () => {
      const lookup: HostLookup = () =>
        Promise.resolve([
          { address: '93.184.216.34', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ]);
      await expect(vetUrl('http://mixed.example/', { allow: [], lookup })).rejects.toThrow('mixed.example resolves to 127.0.0.1');
    });

    it('connects to the vetted address only, so a rebinding resolver cannot switch it', async () => {
      let calls = 0;
      // First answer passes the check; any later one would point at a private address.
      const lookup: HostLookup = () => Promise.resolve([{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.1', family: 4 }]);
      const fetch = await fetcher({ lookup });
      const before = main.seen.length;
      const res = await fetch({ url: `http://rebind.test:${main.port}/text` });
      expect(res.content).toContain('hello wörld');
      expect(calls).toBe(1);
      expect(main.seen.length).toBe(before + 1);
      expect(main.seen.at(-1)?.headers.host).toBe(`rebind.test:${main.port}`);
    });

    it('allows per host:port, not the whole host', async () => {
      const fetch = await fetcher();
      expect((await fetch({ url: `http://127.0.0.1:${other.port}/` })).error?.code).toBe('PERMISSION_DENIED');
      expect(other.seen).toHaveLength(0);
    });

    it('allows a host name entry whatever it resolves to', async () => {
      const fetch = await fetcher({ allowText: `internal.test:${main.port}`, lookup: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]) });
      expect((await fetch({ url: `http://internal.test:${main.port}/text` })).content).toContain('hello wörld');
    });

    it('refuses a non-loopback internal literal before any connection (cloud metadata, private, CGNAT, link-local, multicast, mapped)', async () => {
      const refused = [
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
        'http://172.16.5.4/',
        'http://192.168.1.1/',
        'http://100.64.0.1/',
        'http://0.0.0.0/',
        'http://0/',
        'http://224.0.0.1/',
        'http://255.255.255.255/',
        'http://[fe80::1]/',
        'http://[fd12:3456::1]/',
        'http://[::]/',
        'http://[ff02::1]/',
        'http://[::ffff:169.254.169.254]/',
        'http://[::ffff:a9fe:a9fe]/',
        'http://[::ffff:10.0.0.1]/',
        'http://[64:ff9b::a9fe:a9fe]/',
        'http://[2002:a9fe:a9fe::1]/',
        'http://0xa9fea9fe/',
        'http://2852039166/',
      ];
      for (const url of refused) {
        await expect(vetUrl(url, { allow: [], lookup: noLookup }), url).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
      }
    });

    it('passes a public address and pins it', async () => {
      const target = await vetUrl('https://example.test/a?b=1', { allow: [], lookup: () => Promise.resolve([{ address: '93.184.216.34', family: 4 }]) });
      expect(target).toMatchObject({ host: 'example.test', port: 443, address: '93.184.216.34', family: 4 });
    });
  });

  describe('redirects', () => {
    it('follows a redirect on the allowed server and says where it ended', async () => {
      const fetch = await fetcher();
      const res = await fetch({ url: `http://127.0.0.1:${main.port}/to-text` });
      expect(res.content).toBe(
        `HTTP 200 OK\nURL: http://127.0.0.1:${main.port}/text (after 1 redirect)\nContent-Type: text/plain; charset=utf-8\n\nhello wörld`,
      );
    });

    it('turns a POST into a GET on 303', async () => {
      const fetch = await fetcher();
      const res = await fetch({ url: `http://127.0.0.1:${main.port}/see-other`, method: 'POST', body: 'x' });
      expect(res.content).toContain('"method":"GET","body":""');
    });

    it('re-checks every hop: a redirect to a loopback port that is not allowed is refused', async () => {
      const fetch = await fetcher();
      const res = await fetch({ url: `http://127.0.0.1:${main.port}/to-other-port` });
      expect(res.error?.code).toBe('PERMISSION_DENIED');
      expect(res.content).toBe(
        `Error: Refused to follow the redirect to http://127.0.0.1:${other.port}/: 127.0.0.1 is an internal address (loopback (127.0.0.0/8)). http_fetch only reaches public addresses.`,
      );
      expect(other.seen).toHaveLength(0);
    });

    it('refuses a redirect to a decimal-encoded loopback address', async () => {
      const fetch = await fetcher();
      expect((await fetch({ url: `http://127.0.0.1:${main.port}/to-decimal` })).error?.code).toBe('PERMISSION_DENIED');
      expect(other.seen).toHaveLength(0);
    });

    it('refuses a redirect to localhost when only 127.0.0.1 is allowed (::1 is not)', async () => {
      const fetch = await fetcher();
      expect((await fetch({ url: `http://127.0.0.1:${main.port}/to-localhost` })).content).toContain('localhost resolves to ::1');
    });

    it('refuses a redirect to another scheme', async () => {
      const fetch = await fetcher();
      expect((await fetch({ url: `http://127.0.0.1:${main.port}/to-file` })).content).toBe(
        'Error: Refused to follow the redirect to file:///etc/passwd: only http and https URLs are supported',
      );
    });

    it('stops after 5 redirects', async () => {
      const fetch = await fetcher();
      const before = main.seen.length;
      const res = await fetch({ url: `http://127.0.0.1:${main.port}/loop` });
      expect(res.content).toBe(`Error: Too many redirects (more than 5) from http://127.0.0.1:${main.port}/loop; the last one pointed to /loop?n=6`);
      expect(main.seen.length - before).toBe(6);
    });

    it('drops the Authorization header when a redirect leaves the origin', async () => {
      const fetch = await fetcher({ allowText: `127.0.0.1:${main.port},127.0.0.1:${other.port}` });
      const cross = await startServer((_req, res) => {
        res.writeHead(302, { location: `http://127.0.0.1:${main.port}/echo` });
        res.end();
      });
      try {
        h!.registry.unregister('http_fetch');
        h!.registry.register(
          createHttpFetchTool({ allow: parseAllowList(`127.0.0.1:${main.port},127.0.0.1:${cross.port}`), maxBytes: 1_000, timeoutMs: 10_000 }),
        );
        const res = await fetch({ url: `http://127.0.0.1:${cross.port}/`, headers: { Authorization: 'Bearer secret' } });
        expect(cross.seen[0]?.headers.authorization).toBe('Bearer secret');
        expect(res.content).toContain('"auth":null');
      } finally {
        await new Promise((r) => cross.server.close(r));
      }
    });
  });
});
