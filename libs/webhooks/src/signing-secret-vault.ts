import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Sql } from '@crs/persistence/data-source';
import { parseKey, readOrCreateKeyFile } from '@crs/persistence/key-file';

/**
 * Webhook signing secrets, encrypted at rest. They are needed in clear to sign (HMAC), so unlike API keys
 * they cannot be hashed: each is sealed with AES-256-GCM under a key from WEBHOOK_SECRET_KEY, or from a
 * key file generated under DATA_DIR (mode 0600) on first use. The organization and secret id are bound
 * as associated data, so a ciphertext cannot be moved to another row. This table is not a projection:
 * secrets are not in the event log (which records only that a secret was set, generated or removed),
 * so they are not replayable content.
 */
export const SIGNING_SECRETS_DDL = `CREATE TABLE IF NOT EXISTS webhook_signing_secrets (
  org_id text NOT NULL,
  secret_id uuid NOT NULL,
  key_id text NOT NULL,
  iv bytea NOT NULL,
  tag bytea NOT NULL,
  ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, secret_id)
)`;

export const KEY_FILE_NAME = 'webhook-secret.key';

/** A 32-byte key given as 64 hex characters or as base64. */
export const parseSecretKey = (text: string): Buffer => parseKey(text, 'WEBHOOK_SECRET_KEY');

export class SigningSecretVault {
  private key?: Buffer;

  /** `configuredKey`: WEBHOOK_SECRET_KEY (validated now); otherwise `keyFile` is read, or created on first use. */
  constructor(private readonly sql: Sql, private readonly configuredKey: string | undefined, private readonly keyFile: string) {
    if (configuredKey) this.key = parseSecretKey(configuredKey);
  }

  async init(): Promise<void> {
    await this.sql.query(SIGNING_SECRETS_DDL);
  }

  async put(orgId: string, secretId: string, secret: string): Promise<void> {
    const key = this.currentKey();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(orgId, secretId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    await this.sql.query(
      `INSERT INTO webhook_signing_secrets (org_id, secret_id, key_id, iv, tag, ciphertext) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (org_id, secret_id) DO UPDATE SET key_id = EXCLUDED.key_id, iv = EXCLUDED.iv, tag = EXCLUDED.tag, ciphertext = EXCLUDED.ciphertext`,
      [orgId, secretId, keyId(key), iv, cipher.getAuthTag(), ciphertext],
    );
  }

  /** The secret in clear, or null when no such row exists. Throws when it cannot be decrypted with this process's key. */
  async get(orgId: string, secretId: string): Promise<string | null> {
    const [row] = await this.sql.query('SELECT key_id, iv, tag, ciphertext FROM webhook_signing_secrets WHERE org_id = $1 AND secret_id = $2', [orgId, secretId]);
    if (!row) return null;
    const key = this.currentKey();
    if (row.key_id !== keyId(key)) {
      throw new Error(`the signing secret was encrypted with key ${row.key_id} but this process uses key ${keyId(key)}: give every process the same WEBHOOK_SECRET_KEY`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, row.iv);
    decipher.setAAD(aad(orgId, secretId));
    decipher.setAuthTag(row.tag);
    return Buffer.concat([decipher.update(row.ciphertext), decipher.final()]).toString('utf8');
  }

  /** Removes every secret of the organization except `keep` (the current one). */
  async deleteExcept(orgId: string, keep: string | null): Promise<void> {
    if (keep) await this.sql.query('DELETE FROM webhook_signing_secrets WHERE org_id = $1 AND secret_id <> $2', [orgId, keep]);
    else await this.sql.query('DELETE FROM webhook_signing_secrets WHERE org_id = $1', [orgId]);
  }

  async delete(orgId: string, secretId: string): Promise<void> {
    await this.sql.query('DELETE FROM webhook_signing_secrets WHERE org_id = $1 AND secret_id = $2', [orgId, secretId]);
  }

  private currentKey(): Buffer {
    this.key ??= readOrCreateKeyFile(this.keyFile, `the key file ${this.keyFile}`);
    return this.key;
  }
}

const aad = (orgId: string, secretId: string) => Buffer.from(`crs-webhook-secret:${orgId}:${secretId}`, 'utf8');
const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);
