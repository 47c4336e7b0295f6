import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { DomainError } from '@crs/domain/errors';

/**
 * SSRF guard for webhook URLs: HTTPS to the public internet only. Checked at registration and again at
 * every delivery, after DNS resolution, on every address the name resolves to; the sender then connects
 * to the checked address (pinned), so a DNS answer that changes between check and connect (rebinding)
 * cannot redirect it. Redirects are never followed (see webhook-sender.ts).
 *
 * Numeric tricks (`http://2130706433`, `0x7f.1`, `017700000001`, `127.1`) are normalized by the WHATWG URL
 * parser, the same one Node's HTTP client uses, so the address we check is the address it would connect to.
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

/** Names that never reach the public internet (and single-label names, resolved through local search domains). */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.localdomain', '.internal', '.intranet', '.lan', '.home.arpa', '.corp', '.private'];

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type LookupFn = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface UrlGuardOptions {
  /** Development and tests only (WEBHOOK_ALLOW_LOOPBACK): allows 127.0.0.1 and ::1, and http:// to them. Off by default. */
  allowLoopback: boolean;
  /** Longest DNS wait at registration. */
  lookupTimeoutMs?: number;
}

/** A delivery-time refusal: recorded as the attempt's error, not thrown to a client. */
export class DeliveryTargetError extends Error {
  constructor(readonly code: 'URL_BLOCKED' | 'DNS_FAILED' | 'URL_INVALID', message: string) {
    super(message);
  }
}

export interface PinnedTarget {
  url: URL;
  /** the checked address the connection must use */
  address: string;
  family: 4 | 6;
}

const HTTPS_ONLY = 'url must use https:// (http:// is allowed only to 127.0.0.1/::1 with WEBHOOK_ALLOW_LOOPBACK=true)';
const urlInvalid = (message: string) => new DomainError('validation', 'WEBHOOK_URL_INVALID', message);
const urlBlocked = (message: string) => new DomainError('validation', 'WEBHOOK_URL_BLOCKED', message);

export class WebhookUrlGuard {
  private readonly blocked4 = new BlockList();
  private readonly global6 = new BlockList();
  private readonly blocked6 = new BlockList();
  /** Resolves a name to every address (replaceable in tests to simulate hostile DNS answers). */
  lookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

  constructor(private readonly options: UrlGuardOptions) {
    for (const [net, prefix] of BLOCKED_V4) this.blocked4.addSubnet(net, prefix, 'ipv4');
    this.global6.addSubnet('2000::', 3, 'ipv6');
    for (const [net, prefix] of BLOCKED_V6) this.blocked6.addSubnet(net, prefix, 'ipv6');
  }

  get allowLoopback(): boolean {
    return this.options.allowLoopback;
  }

  /** Whether a connection to this IP address may be made. */
  isAddressAllowed(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    if (this.options.allowLoopback && (address === '127.0.0.1' || address === '::1')) return true;
    if (family === 4) return !this.blocked4.check(address, 'ipv4');
    return this.global6.check(address, 'ipv6') && !this.blocked6.check(address, 'ipv6');
  }

  /**
   * Registration check: a well-formed HTTPS URL whose host is public. A name that resolves to a blocked
   * address is refused; a name that does not resolve now is accepted (it is checked again at each delivery).
   */
  async checkRegistration(raw: unknown): Promise<string> {
    const url = this.parse(raw, (m) => urlInvalid(m));
    if (url.protocol === 'http:' && !this.options.allowLoopback) throw urlInvalid(HTTPS_ONLY);
    const literal = literalAddress(url);
    let addresses: string[];
    if (literal) {
      if (!this.isAddressAllowed(literal)) throw urlBlocked(`url must point to the public internet; ${literal} is a private, loopback, link-local or reserved address`);
      addresses = [literal];
    } else {
      const reason = localName(url.hostname);
      if (reason) throw urlBlocked(`url must point to the public internet; ${reason}`);
      addresses = (await this.resolveWithin(url.hostname, this.options.lookupTimeoutMs ?? 3000).catch(() => [])).map((a) => a.address);
      const bad = addresses.find((a) => !this.isAddressAllowed(a));
      if (bad) throw urlBlocked(`url must point to the public internet; ${url.hostname} resolves to ${bad}`);
    }
    if (url.protocol === 'http:' && !this.loopbackOnly(addresses)) throw urlInvalid(HTTPS_ONLY);
    return url.href;
  }

  /** Delivery check: resolve now, refuse if any address is blocked, and return the address to connect to. */
  async resolveForDelivery(raw: string): Promise<PinnedTarget> {
    const url = this.parse(raw, (m) => new DeliveryTargetError('URL_INVALID', m));
    if (url.protocol === 'http:' && !this.options.allowLoopback) throw new DeliveryTargetError('URL_INVALID', HTTPS_ONLY);
    const literal = literalAddress(url);
    let addresses: string[];
    if (literal) {
      if (!this.isAddressAllowed(literal)) throw new DeliveryTargetError('URL_BLOCKED', `${literal} is not a public address`);
      addresses = [literal];
    } else {
      const reason = localName(url.hostname);
      if (reason) throw new DeliveryTargetError('URL_BLOCKED', reason);
      try {
        addresses = (await this.resolveWithin(url.hostname, 5000)).map((a) => a.address);
      } catch (err) {
        throw new DeliveryTargetError('DNS_FAILED', `could not resolve ${url.hostname}: ${(err as Error).message}`);
      }
      if (!addresses.length) throw new DeliveryTargetError('DNS_FAILED', `${url.hostname} has no address`);
      const bad = addresses.find((a) => !this.isAddressAllowed(a));
      if (bad) throw new DeliveryTargetError('URL_BLOCKED', `${url.hostname} resolves to ${bad}, which is not a public address`);
    }
    if (url.protocol === 'http:' && !this.loopbackOnly(addresses)) throw new DeliveryTargetError('URL_INVALID', HTTPS_ONLY);
    return { url, address: addresses[0], family: isIP(addresses[0]) as 4 | 6 };
  }

  /** http:// is allowed only with WEBHOOK_ALLOW_LOOPBACK and only when every address is 127.0.0.1 or ::1. */
  private loopbackOnly(addresses: string[]): boolean {
    return this.options.allowLoopback && addresses.length > 0 && addresses.every((a) => a === '127.0.0.1' || a === '::1');
  }

  private parse<E extends Error>(raw: unknown, fail: (m: string) => E): URL {
    if (typeof raw !== 'string' || raw.trim() === '') throw fail('url is required: an https:// URL on the public internet');
    if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw fail(`url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw fail('url is not a valid absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw fail('url must use https://');
    if (url.username || url.password) throw fail('url must not carry credentials (user:password@); use a signing secret to authenticate deliveries');
    if (!url.hostname) throw fail('url has no host');
    return url;
  }

  private async resolveWithin(hostname: string, ms: number) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`DNS lookup timed out after ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([this.lookup(hostname), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The IP address a URL's host spells (brackets removed), or null for a name. */
function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : null;
}

function localName(hostname: string): string | null {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || LOCAL_SUFFIXES.some((s) => h.endsWith(s))) return `${hostname} is a local name`;
  if (!h.includes('.')) return `${hostname} is a single-label name (resolved through local search domains)`;
  return null;
}
