import { openDataSource } from './data-source';
import { ProjectionRunner } from './projection-runner';
import { databasesProjection } from '../../../projections/databases/databases.projection';
import { createTestDatabase } from '../../../test/support/test-database';

describe('read model schema changes', () => {
  it('a changed DDL drops the old tables and resets the checkpoint, so the runner rebuilds from the log', async () => {
    const url = await createTestDatabase('schemahash');
    const ds = await openDataSource(url, { poolSize: 2 });
    const log = { info: () => undefined, error: () => undefined };
    const v1 = { ...databasesProjection, ddl: [`CREATE TABLE IF NOT EXISTS rm_databases (id uuid PRIMARY KEY)`, `CREATE TABLE IF NOT EXISTS rm_collections (x int)`] };
    await new ProjectionRunner(ds, {} as any, [v1], log).migrate();
    await ds.query(`UPDATE projection_checkpoints SET position = 42 WHERE name = 'databases'`);
    await new ProjectionRunner(ds, {} as any, [v1], log).migrate();
    expect((await ds.query(`SELECT position FROM projection_checkpoints WHERE name = 'databases'`))[0].position).toBe('42');
    await new ProjectionRunner(ds, {} as any, [databasesProjection], log).migrate();
    expect((await ds.query(`SELECT position FROM projection_checkpoints WHERE name = 'databases'`))[0].position).toBe('0');
    const cols = await ds.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'rm_databases'`);
    expect(cols.map((c: any) => c.column_name)).toContain('scheduler_ready');
    await ds.destroy();
  });
});
