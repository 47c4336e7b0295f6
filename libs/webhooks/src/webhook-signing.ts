import { createHmac, randomBytes } from 'node:crypto';
import { API_VERSION } from '@crs/config';

/** Generated secrets follow the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `X-Service-Signature`: `sha256=` + lowercase hex HMAC-SHA256 of the raw body bytes, keyed by the secret's UTF-8 bytes. */
export function serviceSignature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}

/**
 * Standard Webhooks (standardwebhooks.com) `webhook-signature`: `v1,` + base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>`. The key is the base64 part of a `whsec_` secret, decoded
 * (as their libraries expect); any other secret is used as its UTF-8 bytes.
 */
export function standardSignature(secret: string, id: string, timestampSeconds: number, body: Buffer): string {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** Every header of a delivery; the signature headers only when a secret is configured. */
export function deliveryHeaders(p: { deliveryId: string; eventType: string; body: Buffer; secret: string | null; now: Date }): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `crs-webhooks/${API_VERSION}`,
    'x-service-delivery-id': p.deliveryId,
    'x-service-event': p.eventType,
  };
  if (p.secret) {
    const ts = Math.floor(p.now.getTime() / 1000);
    headers['x-service-signature'] = serviceSignature(p.secret, p.body);
    headers['webhook-id'] = p.deliveryId;
    headers['webhook-timestamp'] = String(ts);
    headers['webhook-signature'] = standardSignature(p.secret, p.deliveryId, ts, p.body);
  }
  return headers;
}
