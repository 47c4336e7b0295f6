import { Client } from 'pg';
import { createTestDatabase } from '../support/test-database';

describe('embedded postgres', () => {
  it('serves a fresh database per suite', async () => {
    const url = await createTestDatabase('smoke');
    const c = new Client({ connectionString: url });
    await c.connect();
    const r = await c.query('select current_database() as db, version() as v');
    await c.end();
    expect(r.rows[0].db).toMatch(/^t_smoke_/);
    expect(r.rows[0].v).toMatch(/PostgreSQL 17/);
  });
});
