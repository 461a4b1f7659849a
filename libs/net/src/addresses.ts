import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/**
 * Address policy of http_fetch (SSRF guard). An address is "internal" when it
 * reaches the host itself, a private network, a cloud metadata service or a
 * special-purpose range; IPv6 forms that embed an IPv4 address (mapped,
 * compatible, NAT64, 6to4) are judged by the embedded address too.
 */

interface Range {
  net: string;
  prefix: number;
  label: string;
}

const IPV4_RANGES: readonly Range[] = [
  { net: '0.0.0.0', prefix: 8, label: '"this network" (0.0.0.0/8)' },
  { net: '10.0.0.0', prefix: 8, label: 'private (10.0.0.0/8)' },
  { net: '100.64.0.0', prefix: 10, label: 'carrier-grade NAT (100.64.0.0/10)' },
  { net: '127.0.0.0', prefix: 8, label: 'loopback (127.0.0.0/8)' },
  { net: '169.254.0.0', prefix: 16, label: 'link-local / cloud metadata (169.254.0.0/16)' },
  { net: '172.16.0.0', prefix: 12, label: 'private (172.16.0.0/12)' },
  { net: '192.0.0.0', prefix: 24, label: 'IETF protocol assignments (192.0.0.0/24)' },
  { net: '192.0.2.0', prefix: 24, label: 'documentation (192.0.2.0/24)' },
  { net: '192.88.99.0', prefix: 24, label: '6to4 relay anycast (192.88.99.0/24)' },
  { net: '192.168.0.0', prefix: 16, label: 'private (192.168.0.0/16)' },
  { net: '198.18.0.0', prefix: 15, label: 'benchmarking (198.18.0.0/15)' },
  { net: '198.51.100.0', prefix: 24, label: 'documentation (198.51.100.0/24)' },
  { net: '203.0.113.0', prefix: 24, label: 'documentation (203.0.113.0/24)' },
  { net: '224.0.0.0', prefix: 4, label: 'multicast (224.0.0.0/4)' },
  { net: '240.0.0.0', prefix: 4, label: 'reserved / broadcast (240.0.0.0/4)' },
];

const IPV6_RANGES: readonly Range[] = [
  { net: '::', prefix: 128, label: 'unspecified (::)' },
  { net: '::1', prefix: 128, label: 'loopback (::1)' },
  { net: '100::', prefix: 64, label: 'discard (100::/64)' },
  { net: '2001::', prefix: 32, label: 'Teredo (2001::/32)' },
  { net: '2001:db8::', prefix: 32, label: 'documentation (2001:db8::/32)' },
  { net: 'fc00::', prefix: 7, label: 'unique local (fc00::/7)' },
  { net: 'fe80::', prefix: 10, label: 'link-local (fe80::/10)' },
  { net: 'fec0::', prefix: 10, label: 'site-local (fec0::/10)' },
  { net: 'ff00::', prefix: 8, label: 'multicast (ff00::/8)' },
];

/** IPv6 prefixes whose low bits carry an IPv4 address: [first bytes, byte offset of the IPv4 address]. */
const EMBEDDING: readonly { prefix: readonly number[]; offset: number; label: string }[] = [
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], offset: 12, label: 'IPv4-mapped' },
  { prefix: [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], offset: 12, label: 'NAT64' },
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], offset: 12, label: 'IPv4-compatible' },
  { prefix: [0x20, 0x02], offset: 2, label: '6to4' },
];

function rangeList(ranges: readonly Range[], type: 'ipv4' | 'ipv6'): { list: BlockList; label: string }[] {
  // One BlockList per range so the matching label can be reported.
  return ranges.map((r) => {
    const list = new BlockList();
    list.addSubnet(r.net, r.prefix, type);
    return { list, label: r.label };
  });
}

const V4 = rangeList(IPV4_RANGES, 'ipv4');
const V6 = rangeList(IPV6_RANGES, 'ipv6');

/**
 * Why an address is internal (e.g. "loopback (127.0.0.0/8)"), or undefined for
 * a public unicast address. Throws for a string that is not an IP address.
 */
export function internalAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return V4.find((r) => r.list.check(address, 'ipv4'))?.label;
  if (family !== 6) throw new Error(`Not an IP address: ${address}`);
  const bytes = ipv6Bytes(address);
  const embedded = embeddedIpv4(bytes);
  if (embedded) {
    const inner = internalAddressReason(embedded.address);
    if (inner) return `${embedded.label} form of ${embedded.address}: ${inner}`;
    // ::a.b.c.d with a public address is still a deprecated form no host should use.
    if (embedded.label === 'IPv4-compatible') return 'IPv4-compatible IPv6 (::/96)';
  }
  const canonical = bytesToIpv6(bytes);
  return V6.find((r) => r.list.check(canonical, 'ipv6'))?.label;
}

/** The IPv4 address inside a mapped/compatible/NAT64/6to4 IPv6 address. */
export function embeddedIpv4(bytes: Uint8Array): { address: string; label: string } | undefined {
  for (const e of EMBEDDING) {
    if (e.prefix.every((b, i) => bytes[i] === b)) {
      const q = bytes.subarray(e.offset, e.offset + 4);
      // "::" and "::1" are the unspecified and loopback addresses, not IPv4-compatible ones.
      if (e.label === 'IPv4-compatible' && q[0] === 0 && q[1] === 0 && q[2] === 0 && (q[3] ?? 0) <= 1) return undefined;
      return { address: Array.from(q).join('.'), label: e.label };
    }
  }
  return undefined;
}

/** 16 bytes of an IPv6 address (with `::` and an optional dotted IPv4 tail; no zone id). */
export function ipv6Bytes(address: string): Uint8Array {
  const out = new Uint8Array(16);
  let text = address.replace(/%.*$/, '');
  const groups: number[] = [];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tailBytes: number[] = [];
  if (tail?.[1]) {
    tailBytes = tail[1].split('.').map(Number);
    text = text.slice(0, -tail[1].length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head = '', rest] = text.split('::');
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const hi = parse(head);
  const lo = rest === undefined ? [] : parse(rest);
  const total = 8 - tailBytes.length / 2;
  const fill = rest === undefined ? 0 : total - hi.length - lo.length;
  groups.push(...hi, ...new Array<number>(Math.max(0, fill)).fill(0), ...lo);
  groups.forEach((g, i) => {
    out[i * 2] = (g >> 8) & 0xff;
    out[i * 2 + 1] = g & 0xff;
  });
  tailBytes.forEach((b, i) => {
    out[12 + i] = b;
  });
  return out;
}

function bytesToIpv6(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** An exception to the guard: an address range or a host name, optionally on one port. */
export type AllowEntry = { kind: 'range'; text: string; list: BlockList; port?: number } | { kind: 'host'; text: string; host: string; port?: number };

/**
 * Parses HTTP_FETCH_ALLOW: comma-separated `cidr|ip|[ipv6]|host` each with an
 * optional `:port`. Throws an Error naming the bad entry.
 */
export function parseAllowList(text: string, variable = 'HTTP_FETCH_ALLOW'): AllowEntry[] {
  try {
    return parseAllowListRaw(text);
  } catch (err) {
    throw new Error((err as Error).message.replace('HTTP_FETCH_ALLOW', variable));
  }
}

function parseAllowListRaw(text: string): AllowEntry[] {
  return text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map(parseAllowEntry);
}

function parseAllowEntry(text: string): AllowEntry {
  let body = text;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(body);
  if (bracketed) {
    body = bracketed[1] ?? '';
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if ((body.match(/:/g) ?? []).length === 1) {
    // One colon: host:port or a.b.c.d/n:port (an IPv6 entry with a port must be bracketed).
    const i = body.lastIndexOf(':');
    const p = body.slice(i + 1);
    if (!/^\d+$/.test(p)) throw new Error(`Invalid HTTP_FETCH_ALLOW entry "${text}": port must be a number`);
    port = Number(p);
    body = body.slice(0, i);
  }
  if (port !== undefined && (port < 1 || port > 65_535)) throw new Error(`Invalid HTTP_FETCH_ALLOW entry "${text}": port out of range`);
  const withPort = port === undefined ? {} : { port };
  const [addr = '', prefixText] = body.split('/');
  const family = isIP(addr);
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) {
      throw new Error(`Invalid HTTP_FETCH_ALLOW entry "${text}": prefix length must be 0-${max}`);
    }
    const list = new BlockList();
    list.addSubnet(addr, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return { kind: 'range', text, list, ...withPort };
  }
  if (prefixText !== undefined) throw new Error(`Invalid HTTP_FETCH_ALLOW entry "${text}": "${addr}" is not an IP address`);
  const host = normalizeHost(addr);
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) {
    throw new Error(`Invalid HTTP_FETCH_ALLOW entry "${text}": expected a CIDR, an IP address or a host name`);
  }
  return { kind: 'host', text, host, ...withPort };
}

/** Lower case, without the trailing dot of a fully qualified name. */
export function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/**
 * Whether an allow entry covers this connection: the host name as written in
 * the URL, the address it resolved to, and the port.
 */
export function isAllowed(entries: readonly AllowEntry[], host: string, address: string, port: number): boolean {
  const name = normalizeHost(host);
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return entries.some((e) => {
    if (e.port !== undefined && e.port !== port) return false;
    if (e.kind === 'host') return e.host === name;
    if (e.list.check(address, family)) return true;
    // An allowed IPv4 range also covers the IPv4-mapped form of its addresses.
    if (family === 'ipv6') {
      const inner = embeddedIpv4(ipv6Bytes(address));
      return inner?.label === 'IPv4-mapped' && e.list.check(inner.address, 'ipv4');
    }
    return false;
  });
}

/** An environment variable holding an allow list (`HTTP_FETCH_ALLOW`, `WEBHOOK_ALLOW`), for zod configs. */
export const envAllowList = (variable: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseAllowList(v ?? '', variable);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
        return z.NEVER;
      }
    });
