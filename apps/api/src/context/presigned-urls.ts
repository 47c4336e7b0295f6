import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { DomainError, invalid } from '@crs/domain/errors';
import { parseKey, readOrCreateKeyFile } from '@crs/persistence/key-file';
import type { AppConfig } from '@crs/config';
import { APP_CONFIG } from '@crs/platform/tokens';

/** Bounds of `expiry_seconds` on GET /context/inspect (docs/ingestion.md, "Presigned URLs"). */
export const PRESIGNED_EXPIRY = { min: 1, max: 86_400, default: 3_600 };

/** Where the key lives when PRESIGNED_URL_KEY is not set. */
export const PRESIGNED_KEY_FILE = 'presigned-url.key';

/** The path a presigned URL points at: `/context/presigned/<token>`. */
export const PRESIGNED_PATH = '/context/presigned/';

/**
 * What a presigned URL grants, signed: the content of one item version to whoever holds the URL until `exp`, as long as
 * the item's ACL is still the one it had (`acl`, a digest) and the API key that asked for it is still valid.
 */
export interface PresignedClaims {
  /** organization, database id and item key: the item */
  org: string;
  db: string;
  item: string;
  /** the item's content version when signed: a new version is other content */
  cv: number;
  /** digest of the item's stored ACL when signed: any ACL edit revokes the URL */
  acl: string;
  /** prefix of the API key that asked for it: revoking the key revokes its URLs */
  key: string;
  /** expiry, Unix seconds */
  exp: number;
}

/** A stored ACL (null: unrestricted) as a short digest, compared when a presigned URL is used. */
export function aclDigest(acl: string[] | null): string {
  return createHash('sha256').update(JSON.stringify(acl ?? null)).digest('base64url').slice(0, 22);
}

export const presignedError = (code: 'PRESIGNED_URL_INVALID' | 'PRESIGNED_URL_EXPIRED' | 'PRESIGNED_URL_REVOKED', message: string) => new DomainError('forbidden', code, message);

/**
 * Signs and checks presigned content URLs: `<base>/context/presigned/<payload>.<signature>`, where the payload is the
 * claims as base64url JSON and the signature HMAC-SHA256 of it under a key of this service (PRESIGNED_URL_KEY, or a
 * key file under DATA_DIR, mode 0600, made on first use). The signature is checked in constant time before anything
 * in the payload is read.
 */
@Injectable()
export class PresignedUrls {
  private key?: Buffer;
  private readonly keyFile: string;
  /** The clock expiry is judged by; replaceable in tests. */
  now: () => number = Date.now;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    // A bad setting stops the start, not the first request.
    if (config.presignedUrls.key) this.key = parseKey(config.presignedUrls.key, 'PRESIGNED_URL_KEY');
    if (config.presignedUrls.publicUrl && !/^https?:$/.test(new URL(config.presignedUrls.publicUrl).protocol)) throw new Error('PUBLIC_URL must be an http:// or https:// address');
    this.keyFile = join(config.dataDir, PRESIGNED_KEY_FILE);
  }

  /** The `exp` of a URL made now that lives `seconds`; `seconds` must be an integer within PRESIGNED_EXPIRY (else 400). */
  expiryOf(seconds: unknown): number {
    const n = seconds === undefined ? PRESIGNED_EXPIRY.default : typeof seconds === 'string' && /^\d+$/.test(seconds) ? Number(seconds) : typeof seconds === 'number' ? seconds : NaN;
    if (!Number.isInteger(n) || n < PRESIGNED_EXPIRY.min || n > PRESIGNED_EXPIRY.max) {
      throw invalid(`expiry_seconds must be an integer from ${PRESIGNED_EXPIRY.min} to ${PRESIGNED_EXPIRY.max}`);
    }
    return Math.floor(this.now() / 1000) + n;
  }

  /** The URL for these claims; `requestBase` (scheme and host of the request) unless PUBLIC_URL is set. */
  url(claims: PresignedClaims, requestBase: string): string {
    const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return `${this.config.presignedUrls.publicUrl ?? requestBase}${PRESIGNED_PATH}${payload}.${this.sign(payload)}`;
  }

  /** The claims of a token this service signed and that has not expired; 403 otherwise. */
  verify(token: string): PresignedClaims {
    const bad = () => presignedError('PRESIGNED_URL_INVALID', 'this is not a presigned URL of this service (altered, or signed with another key)');
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 2048) throw bad();
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
    let claims: PresignedClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw bad();
    }
    if (typeof claims?.exp !== 'number' || typeof claims.item !== 'string' || typeof claims.db !== 'string' || typeof claims.key !== 'string') throw bad();
    if (claims.exp * 1000 <= this.now()) throw presignedError('PRESIGNED_URL_EXPIRED', `this presigned URL expired at ${new Date(claims.exp * 1000).toISOString()}; ask GET /context/inspect for a new one`);
    return claims;
  }

  private sign(payload: string): string {
    this.key ??= readOrCreateKeyFile(this.keyFile, `the key file ${this.keyFile}`);
    return createHmac('sha256', this.key).update(`crs-presigned-v1.${payload}`).digest('base64url');
  }
}
