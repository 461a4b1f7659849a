import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { internalAddressReason, isAllowed, normalizeHost, type AllowEntry } from './addresses.js';
import { HostUnresolvedError, UrlRefusedError } from './errors.js';

/** Resolves a host name to every address it has (dns.lookup with all: true). */
export type HostLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

/** The system resolver (getaddrinfo, so /etc/hosts counts), every address, in the resolver's order. */
export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A URL that passed the guard, with the address the connection must be pinned to. */
export interface VettedTarget {
  url: URL;
  /** Host name (or IP literal, without brackets) as written in the URL. */
  host: string;
  port: number;
  /** The vetted address to connect to (the first one the resolver gave). */
  address: string;
  family: 4 | 6;
}

export interface GuardOptions {
  /** Exceptions to the internal-address rule (hosts, addresses, CIDRs, optional port). */
  allow: readonly AllowEntry[];
  /** Resolver; tests inject one. Default: `systemLookup`. */
  lookup?: HostLookup;
}

/** How refusals are worded for one caller. */
export interface VetWording {
  /** Verb for messages, e.g. "fetch" → "Refused to fetch https://…". Default "fetch". */
  what?: string;
  /** Sentence appended to an internal-address refusal, e.g. "http_fetch only reaches public addresses." */
  policy?: string;
}

type Resolved = readonly { address: string; family: number }[];

/** `localhost` and `*.localhost` (RFC 6761): the host itself, whatever a resolver says. */
function isLocalhostName(host: string): boolean {
  const h = normalizeHost(host);
  return h === 'localhost' || h.endsWith('.localhost');
}

function parse(raw: string | URL): URL {
  if (typeof raw !== 'string') return raw;
  try {
    return new URL(raw);
  } catch {
    throw new UrlRefusedError('INVALID_ARGUMENT', `Invalid URL: ${raw}`);
  }
}

/** The host as written (IPv6 literals without brackets) and the port the connection will use. */
function endpoint(url: URL): { host: string; port: number } {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { host, port };
}

/** Scheme and credentials: the checks that need no address at all. */
function checkShape(url: URL, what: string): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UrlRefusedError('INVALID_ARGUMENT', `Refused to ${what} ${url.href}: only http and https URLs are supported`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UrlRefusedError(
      'INVALID_ARGUMENT',
      `Refused to ${what} ${url.href}: credentials in the URL are not supported; send an Authorization header instead`,
    );
  }
}

/** Addresses known without DNS: an IP literal is itself, `localhost` is both loopbacks. */
function literalAddresses(host: string): Resolved | undefined {
  const family = isIP(host);
  if (family !== 0) return [{ address: host, family }];
  if (isLocalhostName(host)) {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  }
  return undefined;
}

/** Every address must be public or allowed for this host and port; one internal answer refuses the URL. */
function checkAddresses(url: URL, host: string, port: number, addresses: Resolved, allow: readonly AllowEntry[], wording: VetWording): void {
  for (const a of addresses) {
    if (isIP(a.address) === 0) throw new HostUnresolvedError(`Could not resolve host ${host}: resolver returned "${a.address}"`);
    const reason = internalAddressReason(a.address);
    if (reason && !isAllowed(allow, host, a.address, port)) {
      const subject = a.address === host ? host : `${host} resolves to ${a.address}, which`;
      throw new UrlRefusedError(
        'PERMISSION_DENIED',
        `Refused to ${wording.what ?? 'fetch'} ${url.href}: ${subject} is an internal address (${reason}).${wording.policy ? ` ${wording.policy}` : ''}`,
      );
    }
  }
}

/**
 * The SSRF guard for one hop: http(s) only, no credentials in the URL, and every address the host
 * resolves to must be public — or covered by an allow entry for this host/address and port. The
 * WHATWG parser has already normalised 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 to 127.0.0.1;
 * IPv6 forms embedding an IPv4 address are judged by it. A name mixing public and internal
 * addresses is refused outright. Connect to the returned address (see `pinnedLookup`), never to
 * the name again: a second resolution could answer differently (DNS rebinding).
 *
 * @throws UrlRefusedError when the URL is refused; HostUnresolvedError when the host does not resolve.
 */
export async function vetUrl(raw: string | URL, opts: GuardOptions, wording: VetWording = {}): Promise<VettedTarget> {
  const url = parse(raw);
  checkShape(url, wording.what ?? 'fetch');
  const { host, port } = endpoint(url);
  let addresses = literalAddresses(host);
  if (!addresses) {
    try {
      addresses = await (opts.lookup ?? systemLookup)(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      throw new HostUnresolvedError(`Could not resolve host ${host}${code ? ` (${code})` : ''}`, { cause: err });
    }
  }
  const first = addresses[0];
  if (!first) throw new HostUnresolvedError(`Could not resolve host ${host}`);
  checkAddresses(url, host, port, addresses, opts.allow, wording);
  return { url, host, port, address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}

/**
 * The part of the guard that needs no DNS, for checking a URL when it is submitted: bad syntax or
 * scheme, credentials, or an IP literal (or `localhost`) in an internal range not allowed. Host
 * names pass; they are judged by `vetUrl` when used, so a resolver outage does not fail submission.
 *
 * @throws UrlRefusedError
 */
export function vetUrlStatic(raw: string | URL, allow: readonly AllowEntry[], wording: VetWording = {}): void {
  const url = parse(raw);
  checkShape(url, wording.what ?? 'fetch');
  const { host, port } = endpoint(url);
  const addresses = literalAddresses(host);
  if (addresses) checkAddresses(url, host, port, addresses, allow, wording);
}

/** `vetUrlStatic` as a value: the refusal message, or undefined when the URL passes. */
export function staticUrlRefusal(raw: string, allow: readonly AllowEntry[], wording: VetWording = {}): string | undefined {
  try {
    vetUrlStatic(raw, allow, wording);
    return undefined;
  } catch (err) {
    if (err instanceof UrlRefusedError) return err.message;
    throw err;
  }
}

/**
 * A `lookup` for `http.request` / `https.request` / `net.connect` that ignores the name and answers
 * the vetted address: DNS is not asked again, so the answer cannot be rebound between the check and
 * the connect. TLS still verifies the certificate against the name in the URL (SNI and `Host` keep it).
 */
export function pinnedLookup(target: Pick<VettedTarget, 'address' | 'family'>): LookupFunction {
  return (_hostname, options, callback) => {
    // Happy Eyeballs (autoSelectFamily) asks for all addresses; plain connects for one.
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}
