import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which network addresses are the public internet, for every outbound connection a client of this service can point
 * somewhere (webhook URLs, connector targets). A connection to anything else (loopback, private ranges, link-local
 * where cloud metadata lives, reserved and special-purpose ranges) could reach this service's own network on a
 * caller's behalf (SSRF), so the callers refuse it unless an operator allowed it for development.
 */

/** IPv4 ranges that are not public unicast (IANA special-purpose registry, RFC 6890 and successors). */
const BLOCKED_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.31.196.0', 24], // AS112
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // AS112 direct delegation
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

/**
 * IPv6: only global unicast (2000::/3) can be public. That excludes loopback, unspecified, IPv4-mapped and
 * IPv4-compatible addresses (::/8: `[::ffff:127.0.0.1]` and friends), NAT64 (64:ff9b::/96), discard (100::/64),
 * unique-local (fc00::/7), link-local (fe80::/10), site-local and multicast (ff00::/8). Inside 2000::/3 these
 * special ranges are blocked too:
 */
const BLOCKED_V6: [string, number][] = [
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID, ...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['3fff::', 20], // documentation
];

const blocked4 = new BlockList();
const global6 = new BlockList();
const blocked6 = new BlockList();
for (const [net, prefix] of BLOCKED_V4) blocked4.addSubnet(net, prefix, 'ipv4');
global6.addSubnet('2000::', 3, 'ipv6');
for (const [net, prefix] of BLOCKED_V6) blocked6.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is public unicast; anything that is not an IP address is not. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked4.check(address, 'ipv4');
  if (family === 6) return global6.check(address, 'ipv6') && !blocked6.check(address, 'ipv6');
  return false;
}

/** Names that never reach the public internet (and single-label names, resolved through local search domains). */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.localdomain', '.internal', '.intranet', '.lan', '.home.arpa', '.corp', '.private'];

/** Why a host name can only be local (`localhost`, `*.internal`, a single label), or null for a name that may be public. */
export function localNameReason(hostname: string): string | null {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || LOCAL_SUFFIXES.some((s) => h.endsWith(s))) return `${hostname} is a local name`;
  if (!h.includes('.')) return `${hostname} is a single-label name (resolved through local search domains)`;
  return null;
}

/** Resolves a name to every address it stands for. */
export type LookupFn = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** `lookup(hostname)`, failing after `ms` milliseconds. */
export async function resolveWithin(lookup: LookupFn, hostname: string, ms: number): Promise<{ address: string; family: number }[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([lookup(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
