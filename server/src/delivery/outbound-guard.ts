// SSRF guard for every address Herald connects to on a tenant's or a subscriber's word (push endpoints, SMTP servers):
// public addresses only, checked when saved and again at connect time, unless the operator allowed the host.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { AllowedHosts } from '../config.js';

/** The error code a refused address fails the connection with (the resolver's answer, so DNS rebinding can't pass). */
export const BLOCKED_ENDPOINT_CODE = 'ERR_BLOCKED_ENDPOINT';

// BlockList also matches IPv4-mapped IPv6 forms (::ffff:10.0.0.1) against the IPv4 ranges.
const neverAllowed = new BlockList();
neverAllowed.addSubnet('0.0.0.0', 8, 'ipv4'); // unspecified, "this network"
neverAllowed.addSubnet('10.0.0.0', 8, 'ipv4');
neverAllowed.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT (Alibaba's metadata, 100.100.100.200)
neverAllowed.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, cloud metadata
neverAllowed.addSubnet('172.16.0.0', 12, 'ipv4');
neverAllowed.addSubnet('192.168.0.0', 16, 'ipv4');
neverAllowed.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
neverAllowed.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, broadcast
neverAllowed.addSubnet('::', 96, 'ipv6'); // unspecified and the deprecated IPv4-compatible form (::10.0.0.1)
// Transition prefixes embed an IPv4 address a gateway would reach for us (a private one, say); no public server is there.
neverAllowed.addSubnet('64:ff9b::', 96, 'ipv6'); // NAT64
neverAllowed.addSubnet('64:ff9b:1::', 48, 'ipv6'); // local-use NAT64
neverAllowed.addSubnet('2002::', 16, 'ipv6'); // 6to4
neverAllowed.addSubnet('2001::', 32, 'ipv6'); // Teredo
neverAllowed.addSubnet('100::', 64, 'ipv6'); // discard-only
neverAllowed.addSubnet('fc00::', 7, 'ipv6'); // unique local (AWS's IPv6 metadata, fd00:ec2::254)
neverAllowed.addSubnet('fe80::', 10, 'ipv6');
neverAllowed.addSubnet('ff00::', 8, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

// `localhost` and every name under it are loopback whatever a resolver says (RFC 6761 §6.3), with or without the root dot.
const LOCALHOST = /(^|\.)localhost\.*$/;
// Cloud metadata services' names, which their resolvers answer with a link-local address inside the instance; refused
// by name too, so neither a resolver that answers otherwise nor a mistaken allow-list entry reaches them.
const METADATA_NAMES = /^(metadata\.google\.internal|metadata\.goog|metadata|instance-data(\.ec2\.internal)?|metadata\.azure\.internal)\.*$/;

export const NO_ALLOWED_HOSTS: AllowedHosts = { names: [], subnets: [] };

export interface OutboundGuardOptions {
  /** Loopback addresses and names pass, and http on them (ALLOW_INSECURE_PUSH_ENDPOINTS: push tests only). */
  allowInsecure?: boolean;
  allowedHosts?: AllowedHosts;
}

export interface OutboundGuard {
  /**
   * Why `host` (a name, or an IPv4 or bracket-free IPv6 address) must not be contacted, from the host alone (address
   * literals, localhost and metadata names), or undefined. A name's addresses are checked by `resolvedRefusal` and
   * `lookup`.
   */
  hostRefusal(host: string): string | undefined;
  /** Why an https URL must not be contacted: its scheme, then its host as `hostRefusal` judges it. */
  refusal(url: URL): string | undefined;
  /**
   * `hostRefusal`, then every address a name resolves to now (one refused address refuses it): where a save checks an
   * SMTP server. A name that does not resolve passes: connections are checked again.
   */
  resolvedRefusal(host: string): Promise<string | undefined>;
  /** The operator allowed this host, by name or address (its default TLS is then opportunistic). */
  allows(host: string): boolean;
  /** dns.lookup that fails with BLOCKED_ENDPOINT_CODE when every address is refused, and drops refused ones. */
  lookup: LookupFunction;
}

const bare = (host: string) => (host.startsWith('[') ? host.slice(1, -1) : host).toLowerCase();
const typeOf = (family: number | string) => (family === 6 || family === 'IPv6' ? 'ipv6' : 'ipv4');

export function createOutboundGuard(options: OutboundGuardOptions = {}): OutboundGuard {
  const allowInsecure = options.allowInsecure ?? false;
  const allowedHosts = options.allowedHosts ?? NO_ALLOWED_HOSTS;
  const allowedNames = new Set(allowedHosts.names);
  const allowedAddresses = new BlockList();
  for (const subnet of allowedHosts.subnets) allowedAddresses.addSubnet(subnet.network, subnet.prefix, subnet.family);

  const nameAllowed = (host: string) => allowedNames.has(bare(host).replace(/\.+$/, ''));
  const blocked = (address: string, family: number | string) => {
    const type = typeOf(family);
    if (allowedAddresses.check(address, type)) return false;
    // Loopback first: ::1 also lies in ::/96, which stays refused.
    return loopback.check(address, type) ? !allowInsecure : neverAllowed.check(address, type);
  };

  const hostRefusal = (raw: string): string | undefined => {
    const host = bare(raw);
    const family = isIP(host);
    if (family !== 0) return blocked(host, family) ? `must not be a loopback, private or other non-public address (${host})` : undefined;
    if (nameAllowed(host)) return undefined;
    if (METADATA_NAMES.test(host)) return `must not be a cloud metadata service (${host})`;
    if (LOCALHOST.test(host) && !allowInsecure) return `must not be a loopback host (${host})`;
    return undefined;
  };

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '');
      const allowed = nameAllowed(hostname) ? addresses : addresses.filter((a) => !blocked(a.address, a.family));
      const first = allowed[0];
      if (!first) {
        return callback(Object.assign(new Error(`${hostname} resolves to a refused address`), { code: BLOCKED_ENDPOINT_CODE }), '');
      }
      if (lookupOptions.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };

  return {
    hostRefusal,
    // The URL parser has already normalised the host: 0x7f.1 and 2130706433 are 127.0.0.1, [::ffff:127.0.0.1] is
    // [::ffff:7f00:1] (which BlockList matches against the IPv4 ranges).
    refusal(url) {
      const host = bare(url.hostname);
      const family = isIP(host);
      const onLoopback = family === 0 ? LOCALHOST.test(host) : loopback.check(host, typeOf(family));
      if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:' && onLoopback)) {
        return allowInsecure ? 'must be an https URL (http only on a loopback host)' : 'must be an https URL';
      }
      return hostRefusal(host);
    },
    async resolvedRefusal(raw) {
      const refusal = hostRefusal(raw);
      const host = bare(raw);
      if (refusal || isIP(host) !== 0 || nameAllowed(host)) return refusal;
      // A name that does not resolve from here (yet) is let through: nothing is reached by it, and connections check again.
      const addresses = await new Promise<LookupAddress[]>((resolve) => dnsLookup(host, { all: true }, (error, found) => resolve(error ? [] : found)));
      const refused = addresses.find((a) => blocked(a.address, a.family));
      return refused && `must not resolve to a loopback, private or other non-public address (${host} is ${refused.address})`;
    },
    allows: (host) => nameAllowed(host) || (isIP(bare(host)) !== 0 && allowedAddresses.check(bare(host), typeOf(isIP(bare(host))))),
    lookup,
  };
}
