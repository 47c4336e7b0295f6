import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Creates a fresh, empty Postgres database on the run's server and returns its URL. */
export async function createTestDatabase(label = 'suite'): Promise<string> {
  const base = process.env.CRS_TEST_PG_URL;
  if (!base) throw new Error('CRS_TEST_PG_URL is not set: jest global setup did not run');
  const name = `t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}
