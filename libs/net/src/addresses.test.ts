import { describe, expect, it } from 'vitest';
import { internalAddressReason, isAllowed, parseAllowList } from './addresses.js';

describe('internalAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback (127.0.0.0/8)'],
    ['127.255.255.254', 'loopback (127.0.0.0/8)'],
    ['10.1.2.3', 'private (10.0.0.0/8)'],
    ['172.31.255.255', 'private (172.16.0.0/12)'],
    ['192.168.0.1', 'private (192.168.0.0/16)'],
    ['169.254.169.254', 'link-local / cloud metadata (169.254.0.0/16)'],
    ['100.127.0.1', 'carrier-grade NAT (100.64.0.0/10)'],
    ['0.1.2.3', '"this network" (0.0.0.0/8)'],
    ['239.1.1.1', 'multicast (224.0.0.0/4)'],
    ['::1', 'loopback (::1)'],
    ['::', 'unspecified (::)'],
    ['fe80::abcd', 'link-local (fe80::/10)'],
    ['fc00::1', 'unique local (fc00::/7)'],
    ['ff05::2', 'multicast (ff00::/8)'],
    ['::ffff:127.0.0.1', 'IPv4-mapped form of 127.0.0.1: loopback (127.0.0.0/8)'],
    ['::ffff:7f00:1', 'IPv4-mapped form of 127.0.0.1: loopback (127.0.0.0/8)'],
    ['::ffff:169.254.169.254', 'IPv4-mapped form of 169.254.169.254: link-local / cloud metadata (169.254.0.0/16)'],
    ['64:ff9b::10.0.0.1', 'NAT64 form of 10.0.0.1: private (10.0.0.0/8)'],
    ['2002:c0a8:101::1', '6to4 form of 192.168.1.1: private (192.168.0.0/16)'],
    ['::127.0.0.1', 'IPv4-compatible form of 127.0.0.1: loopback (127.0.0.0/8)'],
  ])('classifies %s as %s', (address, reason) => {
    expect(internalAddressReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('passes the public address %s', (address) => {
    expect(internalAddressReason(address)).toBeUndefined();
  });

  it('throws for something that is not an address', () => {
    expect(() => internalAddressReason('localhost')).toThrow('Not an IP address');
  });
});

describe('HTTP_FETCH_ALLOW', () => {
  const allow = parseAllowList('127.0.0.1:8080, [::1]:81, 10.0.0.0/8:443, api.internal, fd00::/8');

  it('matches an IP entry on its port only', () => {
    expect(isAllowed(allow, '127.0.0.1', '127.0.0.1', 8080)).toBe(true);
    expect(isAllowed(allow, '127.0.0.1', '127.0.0.1', 8081)).toBe(false);
    expect(isAllowed(allow, 'x', '::1', 81)).toBe(true);
  });

  it('matches a CIDR entry with a port', () => {
    expect(isAllowed(allow, 'x', '10.9.9.9', 443)).toBe(true);
    expect(isAllowed(allow, 'x', '10.9.9.9', 80)).toBe(false);
  });

  it('matches a host entry by name on any port, ignoring case and a trailing dot', () => {
    expect(isAllowed(allow, 'API.Internal.', '192.168.1.1', 1234)).toBe(true);
  });

  it('covers the IPv4-mapped form of an allowed IPv4 address', () => {
    expect(isAllowed(allow, 'x', '::ffff:127.0.0.1', 8080)).toBe(true);
  });

  it('matches an IPv6 range without a port', () => {
    expect(isAllowed(allow, 'x', 'fd00::5', 1)).toBe(true);
  });

  it.each([
    ['1.2.3.4/33', 'prefix length must be 0-32'],
    ['foo_bar', 'expected a CIDR, an IP address or a host name'],
    ['1.2.3.4:x', 'port must be a number'],
    ['[::1]:99999', 'port out of range'],
    ['api.internal/8', 'is not an IP address'],
  ])('refuses the entry %s', (entry, message) => {
    expect(() => parseAllowList(entry)).toThrow(message);
  });
});
