import { DomainError, invalid } from '@crs/domain/errors';

/** Spec: a supplied signing secret has at least 16 characters. */
export const MIN_SECRET_CHARS = 16;
export const MAX_SECRET_CHARS = 512;

// The checks of the signing-secret fields that POST /webhooks/indexing and POST /webhooks/indexing/signing-secret
// share. Their DTOs only whitelist the fields: each failure here has its own message (400 INVALID_INPUT), and both
// secret options together are 422 SIGNING_SECRET_CONFLICT, which class-validator would not say.

/** Absent or null: false. */
export function booleanField(v: unknown, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(`${field} must be a boolean`);
  return v;
}

/** A supplied secret: a string of 16 to 512 characters. */
export function secretField(v: unknown): string {
  if (typeof v !== 'string') throw invalid('signing_secret must be a string');
  const n = [...v].length;
  if (n < MIN_SECRET_CHARS) throw invalid(`signing_secret must be at least ${MIN_SECRET_CHARS} characters`);
  if (n > MAX_SECRET_CHARS) throw invalid(`signing_secret must be at most ${MAX_SECRET_CHARS} characters`);
  return v;
}

/** 422 when the request asks for a generated secret and supplies one too. */
export function refuseBothSecretOptions(generate: boolean, supplied: unknown): void {
  if (generate && supplied !== undefined) {
    throw new DomainError('unprocessable', 'SIGNING_SECRET_CONFLICT', 'send either generate_signing_secret or signing_secret, not both');
  }
}
