import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Sql } from './data-source';
import { parseKey, readOrCreateKeyFile } from './key-file';

/** What one kind of sealed secret is: where its rows live, what binds them, and which setting gives its key. */
export interface SealedSecretsKind {
  /** The table (a constant of the code, never input). */
  table: string;
  /** Bound into every ciphertext with the organization and the secret id, so a row cannot be moved to another kind. */
  purpose: string;
  /** The setting that may give the key (named in errors), e.g. WEBHOOK_SECRET_KEY. */
  keySetting: string;
  /** What the secrets are, for messages: "signing secret", "connector credentials". */
  noun: string;
}

/**
 * Secrets the service needs in clear (to sign, to call a provider), so they cannot be hashed as API keys are: each is
 * sealed with AES-256-GCM under a key from the kind's setting, or from a key file generated under DATA_DIR (mode 0600)
 * on first use. The organization and the secret id are bound as associated data, so a ciphertext cannot be moved to
 * another row. These tables are not projections: the event log records only that a secret was set or replaced, never
 * the secret, so a secret is not replayable content.
 */
export class SealedSecrets {
  private key?: Buffer;

  /** `configuredKey`: the kind's setting (validated now); otherwise `keyFile` is read, or created on first use. */
  constructor(
    private readonly sql: Sql,
    private readonly kind: SealedSecretsKind,
    configuredKey: string | undefined,
    private readonly keyFile: string,
  ) {
    if (configuredKey) this.key = parseKey(configuredKey, kind.keySetting);
  }

  async init(): Promise<void> {
    await this.sql.query(`CREATE TABLE IF NOT EXISTS ${this.kind.table} (
  org_id text NOT NULL,
  secret_id uuid NOT NULL,
  key_id text NOT NULL,
  iv bytea NOT NULL,
  tag bytea NOT NULL,
  ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, secret_id)
)`);
  }

  async put(orgId: string, secretId: string, secret: string): Promise<void> {
    const key = this.currentKey();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(this.aad(orgId, secretId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    await this.sql.query(
      `INSERT INTO ${this.kind.table} (org_id, secret_id, key_id, iv, tag, ciphertext) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (org_id, secret_id) DO UPDATE SET key_id = EXCLUDED.key_id, iv = EXCLUDED.iv, tag = EXCLUDED.tag, ciphertext = EXCLUDED.ciphertext`,
      [orgId, secretId, keyId(key), iv, cipher.getAuthTag(), ciphertext],
    );
  }

  /** The secret in clear, or null when no such row exists. Throws when it cannot be decrypted with this process's key. */
  async get(orgId: string, secretId: string): Promise<string | null> {
    const [row] = await this.sql.query(`SELECT key_id, iv, tag, ciphertext FROM ${this.kind.table} WHERE org_id = $1 AND secret_id = $2`, [orgId, secretId]);
    if (!row) return null;
    const key = this.currentKey();
    if (row.key_id !== keyId(key)) {
      throw new Error(`the ${this.kind.noun} was encrypted with key ${row.key_id} but this process uses key ${keyId(key)}: give every process the same ${this.kind.keySetting}`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, row.iv);
    decipher.setAAD(this.aad(orgId, secretId));
    decipher.setAuthTag(row.tag);
    return Buffer.concat([decipher.update(row.ciphertext), decipher.final()]).toString('utf8');
  }

  /** Removes every secret of the organization except `keep` (the current one). */
  async deleteExcept(orgId: string, keep: string | null): Promise<void> {
    if (keep) await this.sql.query(`DELETE FROM ${this.kind.table} WHERE org_id = $1 AND secret_id <> $2`, [orgId, keep]);
    else await this.sql.query(`DELETE FROM ${this.kind.table} WHERE org_id = $1`, [orgId]);
  }

  async delete(orgId: string, secretId: string): Promise<void> {
    await this.sql.query(`DELETE FROM ${this.kind.table} WHERE org_id = $1 AND secret_id = $2`, [orgId, secretId]);
  }

  private currentKey(): Buffer {
    this.key ??= readOrCreateKeyFile(this.keyFile, `the key file ${this.keyFile}`);
    return this.key;
  }

  private aad(orgId: string, secretId: string): Buffer {
    return Buffer.from(`${this.kind.purpose}:${orgId}:${secretId}`, 'utf8');
  }
}

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);
