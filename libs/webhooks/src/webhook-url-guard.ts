import { isIP } from 'node:net';
import { DomainError } from '@crs/domain/errors';
import { isPublicAddress, localNameReason, resolveWithin, systemLookup, type LookupFn } from '@crs/network/address-policy';

/**
 * SSRF guard for webhook URLs: HTTPS to the public internet only. Checked at registration and again at
 * every delivery, after DNS resolution, on every address the name resolves to; the sender then connects
 * to the checked address (pinned), so a DNS answer that changes between check and connect (rebinding)
 * cannot redirect it. Redirects are never followed (see webhook-sender.ts).
 *
 * Numeric tricks (`http://2130706433`, `0x7f.1`, `017700000001`, `127.1`) are normalized by the WHATWG URL
 * parser, the same one Node's HTTP client uses, so the address we check is the address it would connect to. Which
 * addresses and names are public is libs/network's policy, shared with the connectors.
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type { LookupFn };

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
  /** Resolves a name to every address (replaceable in tests to simulate hostile DNS answers). */
  lookup: LookupFn = systemLookup;

  constructor(private readonly options: UrlGuardOptions) {}

  get allowLoopback(): boolean {
    return this.options.allowLoopback;
  }

  /** Whether a connection to this IP address may be made. */
  isAddressAllowed(address: string): boolean {
    if (this.options.allowLoopback && (address === '127.0.0.1' || address === '::1')) return true;
    return isPublicAddress(address);
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
      const reason = localNameReason(url.hostname);
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
      const reason = localNameReason(url.hostname);
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

  private resolveWithin(hostname: string, ms: number) {
    return resolveWithin(this.lookup, hostname, ms);
  }
}

/** The IP address a URL's host spells (brackets removed), or null for a name. */
function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : null;
}
