// SSRF guard for push endpoints, which subscribers supply: https to public addresses only, checked at connect time.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** The error code a refused address fails the connection with (the resolver's answer, so DNS rebinding can't pass). */
export const BLOCKED_ENDPOINT_CODE = 'ERR_BLOCKED_ENDPOINT';

// BlockList also matches IPv4-mapped IPv6 forms (::ffff:10.0.0.1) against the IPv4 ranges.
const neverAllowed = new BlockList();
neverAllowed.addSubnet('0.0.0.0', 8, 'ipv4'); // unspecified, "this network"
neverAllowed.addSubnet('10.0.0.0', 8, 'ipv4');
neverAllowed.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT
neverAllowed.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, cloud metadata
neverAllowed.addSubnet('172.16.0.0', 12, 'ipv4');
neverAllowed.addSubnet('192.168.0.0', 16, 'ipv4');
neverAllowed.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
neverAllowed.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, broadcast
neverAllowed.addSubnet('::', 96, 'ipv6'); // unspecified and the deprecated IPv4-compatible form (::10.0.0.1)
// Transition prefixes embed an IPv4 address a gateway would reach for us (a private one, say); no push service is there.
neverAllowed.addSubnet('64:ff9b::', 96, 'ipv6'); // NAT64
neverAllowed.addSubnet('64:ff9b:1::', 48, 'ipv6'); // local-use NAT64
neverAllowed.addSubnet('2002::', 16, 'ipv6'); // 6to4
neverAllowed.addSubnet('2001::', 32, 'ipv6'); // Teredo
neverAllowed.addSubnet('100::', 64, 'ipv6'); // discard-only
neverAllowed.addSubnet('fc00::', 7, 'ipv6'); // unique local
neverAllowed.addSubnet('fe80::', 10, 'ipv6');
neverAllowed.addSubnet('ff00::', 8, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

// `localhost` and every name under it are loopback whatever a resolver says (RFC 6761 §6.3), with or without the root dot.
const LOCALHOST = /(^|\.)localhost\.*$/;

export interface EndpointGuard {
  /**
   * Why `url` must not be contacted ("must be an https URL" …), or undefined: what the URL alone tells (scheme,
   * address literals, localhost names), so registration refuses it too. A hostname's addresses are checked later,
   * by `lookup`.
   */
  refusal(url: URL): string | undefined;
  /** dns.lookup that fails with BLOCKED_ENDPOINT_CODE when every address is refused, and drops refused ones. */
  lookup: LookupFunction;
}

export function createEndpointGuard(allowInsecure: boolean): EndpointGuard {
  const blocked = (address: string, family: number | string) => {
    const type = family === 6 || family === 'IPv6' ? 'ipv6' : 'ipv4';
    // Loopback first: ::1 also lies in ::/96, which stays refused.
    return loopback.check(address, type) ? !allowInsecure : neverAllowed.check(address, type);
  };

  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '');
      const allowed = addresses.filter((a) => !blocked(a.address, a.family));
      const first = allowed[0];
      if (!first) {
        return callback(Object.assign(new Error(`push endpoint ${hostname} resolves to a refused address`), { code: BLOCKED_ENDPOINT_CODE }), '');
      }
      if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };

  return {
    // The URL parser has already normalised the host: 0x7f.1 and 2130706433 are 127.0.0.1, [::ffff:127.0.0.1] is
    // [::ffff:7f00:1] (which BlockList matches against the IPv4 ranges).
    refusal(url) {
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const family = isIP(host);
      const onLoopback = family === 0 ? LOCALHOST.test(host) : loopback.check(host, family === 6 ? 'ipv6' : 'ipv4');
      if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:' && onLoopback)) {
        return allowInsecure ? 'must be an https URL (http only on a loopback host)' : 'must be an https URL';
      }
      if (family !== 0 && blocked(host, family)) return `must not be a loopback, private or other non-public address (${host})`;
      if (family === 0 && onLoopback && !allowInsecure) return `must not be a loopback host (${host})`;
      return undefined;
    },
    lookup,
  };
}
