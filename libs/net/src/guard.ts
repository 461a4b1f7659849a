import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { AgentLoopError, type ErrorCode } from '@agentloop/core';
import { internalAddressReason, isAllowed, normalizeHost, type AllowEntry } from './addresses.js';

/** Resolves a host name to every address it has (dns.lookup with all: true). */
export type HostLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A URL that passed the guard, with the address the connection must be pinned to. */
export interface VettedTarget {
  url: URL;
  /** Host name (or IP literal, without brackets) as written in the URL. */
  host: string;
  port: number;
  address: string;
  family: 4 | 6;
}

/** The guard refused a URL; the message says why and is safe to show. */
export class UrlRefusedError extends AgentLoopError {
  override name = 'UrlRefusedError';
  constructor(code: ErrorCode, message: string) {
    super(code, message, { retryable: false });
  }
}

export interface GuardOptions {
  /** Exceptions to the internal-address rule (hosts, addresses, CIDRs, optional port). */
  allow: readonly AllowEntry[];
  /** Resolver; tests inject one. Default: dns.lookup. */
  lookup?: HostLookup;
}

export interface VetWording {
  /** Verb for messages, e.g. "fetch" → "Refused to fetch https://…". */
  what?: string;
  /** Sentence appended to an internal-address refusal, e.g. "http_fetch only reaches public addresses." */
  policy?: string;
}

function isLocalhostName(host: string): boolean {
  const h = normalizeHost(host);
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * The SSRF guard for one hop: http(s) only, no credentials in the URL, and every address the host
 * resolves to must be public — or covered by an allow entry for this host/address and port. The
 * WHATWG parser has already normalised 2130706433, 0177.0.0.1 and 0x7f.1 to 127.0.0.1; IPv6 forms
 * embedding an IPv4 address are judged by it. A name mixing public and internal addresses is
 * refused outright. Connect to the returned address (see `pinnedLookup`), never to the name again.
 */
export async function vetUrl(raw: string | URL, opts: GuardOptions, wording: VetWording = {}): Promise<VettedTarget> {
  const what = wording.what ?? 'fetch';
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new UrlRefusedError('INVALID_ARGUMENT', `Invalid URL: ${String(raw)}`);
  }
  const shown = url.href;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UrlRefusedError('INVALID_ARGUMENT', `Refused to ${what} ${shown}: only http and https URLs are supported`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UrlRefusedError('INVALID_ARGUMENT', `Refused to ${what} ${shown}: credentials in the URL are not supported; send an Authorization header instead`);
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  let addresses: readonly { address: string; family: number }[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else if (isLocalhostName(host)) {
    // RFC 6761: these names are the host itself, whatever a resolver says.
    addresses = [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  } else {
    try {
      addresses = await (opts.lookup ?? systemLookup)(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      throw new UrlRefusedError('NOT_FOUND', `Could not resolve host ${host}${code ? ` (${code})` : ''}`);
    }
    if (addresses.length === 0) throw new UrlRefusedError('NOT_FOUND', `Could not resolve host ${host}`);
  }
  for (const a of addresses) {
    if (isIP(a.address) === 0) throw new UrlRefusedError('NOT_FOUND', `Could not resolve host ${host}: resolver returned "${a.address}"`);
    const reason = internalAddressReason(a.address);
    if (reason && !isAllowed(opts.allow, host, a.address, port)) {
      const via = a.address === host ? host : `${host} resolves to ${a.address}, which`;
      throw new UrlRefusedError('PERMISSION_DENIED', `Refused to ${what} ${shown}: ${via} is an internal address (${reason}).${wording.policy ? ` ${wording.policy}` : ''}`);
    }
  }
  const first = addresses[0]!;
  return { url, host, port, address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}

/**
 * A `lookup` for http(s).request that ignores the name and answers the vetted address: DNS is not
 * asked again, so it cannot be rebound between the check and the connect. TLS still verifies the name.
 */
export function pinnedLookup(target: Pick<VettedTarget, 'address' | 'family'>): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

/**
 * Whether a URL is refused before any DNS lookup: bad scheme, credentials, or an IP literal in an
 * internal range not allowed. Returns the reason, or undefined (host names are judged when
 * resolved, at use time).
 */
export function staticUrlRefusal(raw: string, allow: readonly AllowEntry[], wording: VetWording = {}): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `Invalid URL: ${raw}`;
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) === 0 && !isLocalhostName(host)) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Refused to ${wording.what ?? 'fetch'} ${url.href}: only http and https URLs are supported`;
    if (url.username !== '' || url.password !== '') return `Refused to ${wording.what ?? 'fetch'} ${url.href}: credentials in the URL are not supported; send an Authorization header instead`;
    return undefined;
  }
  // IP literals and localhost: the same checks as at use time, without a resolver.
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const addresses = isIP(host) !== 0 ? [host] : ['127.0.0.1', '::1'];
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Refused to ${wording.what ?? 'fetch'} ${url.href}: only http and https URLs are supported`;
  if (url.username !== '' || url.password !== '') return `Refused to ${wording.what ?? 'fetch'} ${url.href}: credentials in the URL are not supported; send an Authorization header instead`;
  for (const a of addresses) {
    const reason = internalAddressReason(a);
    if (reason && !isAllowed(allow, host, a, port)) return `Refused to ${wording.what ?? 'fetch'} ${url.href}: ${host} is an internal address (${reason}).${wording.policy ? ` ${wording.policy}` : ''}`;
  }
  return undefined;
}
