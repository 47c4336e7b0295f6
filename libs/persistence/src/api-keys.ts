import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Sql } from './data-source';
import { queryPrepared } from './prepared';

/**
 * API keys: `<prefix>.<secret>`. Only a SHA-256 of the secret is stored (secrets are 256 random bits, so a
 * fast hash is enough: there is nothing to brute-force); comparison is constant-time. Keys are not events:
 * they are secrets, kept out of the log on purpose.
 */
export interface ApiKeyRecord {
  prefix: string;
  orgId: string;
  /** null = every database of the organization */
  databases: string[] | null;
  createdAt: string;
  revokedAt: string | null;
  label: string | null;
}

export const API_KEYS_DDL = [
  `CREATE TABLE IF NOT EXISTS organizations (id text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE IF NOT EXISTS api_keys (
    prefix text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organizations(id),
    secret_sha256 bytea NOT NULL,
    databases text[],
    label text,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  )`,
];

const PREFIX = /^[A-Za-z0-9_-]{4,64}$/;
const ORG = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function parseApiKey(raw: string): { prefix: string; secret: string } | null {
  const dot = raw.indexOf('.');
  if (dot <= 0 || dot === raw.length - 1) return null;
  const prefix = raw.slice(0, dot);
  const secret = raw.slice(dot + 1);
  if (!PREFIX.test(prefix) || secret.length < 16 || secret.length > 256) return null;
  return { prefix, secret };
}

export class ApiKeyRepository {
  constructor(private readonly sql: Sql) {}

  async init(): Promise<void> {
    for (const ddl of API_KEYS_DDL) await this.sql.query(ddl);
  }

  async ensureOrganization(orgId: string): Promise<void> {
    if (!ORG.test(orgId)) throw new Error(`organization id must match ${ORG}`);
    await this.sql.query('INSERT INTO organizations (id) VALUES ($1) ON CONFLICT DO NOTHING', [orgId]);
  }

  /** Creates a key and returns it in full: the only time the secret is ever visible. */
  async create(orgId: string, opts: { databases?: string[] | null; label?: string } = {}): Promise<{ key: string; record: ApiKeyRecord }> {
    await this.ensureOrganization(orgId);
    const prefix = `crs_${randomBytes(6).toString('hex')}`;
    const secret = randomBytes(32).toString('base64url');
    await this.insert(orgId, prefix, secret, opts.databases ?? null, opts.label ?? null);
    const record = (await this.find(prefix))!;
    return { key: `${prefix}.${secret}`, record };
  }

  /** Seeds a known key (BOOTSTRAP_API_KEY) idempotently; a different secret for an existing prefix is an error. */
  async seed(orgId: string, rawKey: string): Promise<'created' | 'exists'> {
    const parsed = parseApiKey(rawKey);
    if (!parsed) throw new Error('BOOTSTRAP_API_KEY must look like <prefix>.<secret> (prefix 4-64 of [A-Za-z0-9_-], secret at least 16 characters)');
    await this.ensureOrganization(orgId);
    const existing = await this.find(parsed.prefix);
    if (existing) {
      if (!(await this.verify(rawKey))) throw new Error(`BOOTSTRAP_API_KEY prefix ${parsed.prefix} already exists with a different secret or was revoked`);
      return 'exists';
    }
    await this.insert(orgId, parsed.prefix, parsed.secret, null, 'bootstrap');
    return 'created';
  }

  private async insert(orgId: string, prefix: string, secret: string, databases: string[] | null, label: string | null): Promise<void> {
    await this.sql.query('INSERT INTO api_keys (prefix, org_id, secret_sha256, databases, label) VALUES ($1, $2, $3, $4, $5)', [prefix, orgId, sha256(secret), databases, label]);
  }

  /** Returns the key's record when the key is valid and not revoked; null otherwise. */
  async verify(rawKey: string): Promise<ApiKeyRecord | null> {
    const parsed = parseApiKey(rawKey);
    // Hash even for malformed keys so timing does not reveal which check failed.
    const presented = sha256(parsed?.secret ?? rawKey);
    if (!parsed) return null;
    const rows: any[] = await queryPrepared(this.sql, 'crs_key_verify', 'SELECT prefix, org_id, secret_sha256, databases, label, created_at, revoked_at FROM api_keys WHERE prefix = $1', [parsed.prefix]);
    const row = rows[0];
    const stored: Buffer = row ? row.secret_sha256 : sha256('no such key');
    const match = timingSafeEqual(stored, presented);
    if (!row || !match || row.revoked_at) return null;
    return toRecord(row);
  }

  async find(prefix: string): Promise<ApiKeyRecord | null> {
    const rows: any[] = await this.sql.query('SELECT prefix, org_id, databases, label, created_at, revoked_at FROM api_keys WHERE prefix = $1', [prefix]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(orgId?: string): Promise<ApiKeyRecord[]> {
    const rows: any[] = await this.sql.query(
      `SELECT prefix, org_id, databases, label, created_at, revoked_at FROM api_keys ${orgId ? 'WHERE org_id = $1' : ''} ORDER BY created_at, prefix`,
      orgId ? [orgId] : [],
    );
    return rows.map(toRecord);
  }

  async revoke(prefix: string): Promise<boolean> {
    // A CTE so every driver returns plain rows (TypeORM answers UPDATE ... RETURNING with [rows, count]).
    const rows: any[] = await this.sql.query('WITH u AS (UPDATE api_keys SET revoked_at = now() WHERE prefix = $1 AND revoked_at IS NULL RETURNING prefix) SELECT prefix FROM u', [prefix]);
    return rows.length > 0;
  }
}

function toRecord(row: any): ApiKeyRecord {
  return {
    prefix: row.prefix,
    orgId: row.org_id,
    databases: row.databases ?? null,
    label: row.label ?? null,
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  };
}
