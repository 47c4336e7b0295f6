import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase } from '../support/test-database';
import { connectorConformance } from './conformance';

/**
 * The conformance suite against the database provider (the platform's built-in `postgres`), reading a second database
 * on the run's embedded Postgres through a role that may only SELECT. The provider captures no permissions and its
 * rate limit cannot be scripted: those two cases are skipped.
 */
const ROLE = `crs_conf_${randomBytes(3).toString('hex')}`;
const PASSWORD = 'conformance-pass-1';
let admin: Client;
let sourceUrl: string;

const withUser = (base: string, password: string) => {
  const u = new URL(base);
  u.username = ROLE;
  u.password = password;
  return u.toString();
};

connectorConformance('postgres provider', () => ({
  providerId: 'postgres',
  resource: { resourceId: 'app.docs', resourceType: 'table', name: 'docs', options: { page_size: 2 } },
  get credentials() {
    return { connection_string: withUser(sourceUrl, PASSWORD) };
  },
  async setUp() {
    sourceUrl = await createTestDatabase('conn_conformance_source');
    admin = new Client({ connectionString: sourceUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query(`CREATE SCHEMA app`);
    await admin.query(`GRANT USAGE ON SCHEMA app TO ${ROLE}`);
    await admin.query(`CREATE TABLE app.docs (id text PRIMARY KEY, title text NOT NULL, body text NOT NULL, updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await admin.query(`CREATE INDEX ON app.docs (updated_at, id)`);
    await admin.query(`GRANT SELECT ON app.docs TO ${ROLE}`);
  },
  async tearDown() {
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [ROLE]).catch(() => undefined);
    await admin.query(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => undefined);
    await admin.end();
  },
  async put(id, text) {
    await admin.query(
      `INSERT INTO app.docs (id, title, body) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, updated_at = clock_timestamp()`,
      [id, `Document ${id}`, text],
    );
  },
  async remove(id) {
    await admin.query(`DELETE FROM app.docs WHERE id = $1`, [id]);
  },
  async revokeCredentials() {
    await admin.query(`ALTER ROLE ${ROLE} PASSWORD 'changed-elsewhere-1'`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [ROLE]);
  },
  async restoreCredentials() {
    await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${PASSWORD}'`);
  },
}));
