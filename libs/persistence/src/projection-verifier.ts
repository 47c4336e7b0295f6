import { createHash, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { openDataSource } from './data-source';
import type { ProjectionRunner } from './projection-runner';

export interface VerifyResult {
  name: string;
  equal: boolean;
  position: number;
  tables: { table: string; live: string; rebuilt: string; rows: number }[];
  firstDifference?: { table: string; index: number; live: string | null; rebuilt: string | null };
}

/**
 * Rebuilds a read model into a throw-away shadow schema from the log, up to the live checkpoint, and
 * compares it with the live tables (checksums; the first differing row when they differ). The live side
 * is read in one REPEATABLE READ snapshot, so its rows and checkpoint agree.
 */
export async function verifyProjection(runner: ProjectionRunner, live: DataSource, databaseUrl: string, name: string): Promise<VerifyResult> {
  const projection = runner.readModels.find((p) => p.name === name);
  if (!projection) throw new Error(`unknown read model ${name}`);
  const schema = `verify_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(3).toString('hex')}`;

  const liveRows = new Map<string, string[]>();
  let position = 0;
  const qr = live.createQueryRunner();
  await qr.connect();
  try {
    await qr.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const [cp] = await qr.query('SELECT position FROM projection_checkpoints WHERE name = $1', [name]);
    position = cp ? Number(cp.position) : 0;
    for (const table of projection.tables) liveRows.set(table, await tableRows(qr, table));
    await qr.query('COMMIT');
  } finally {
    await qr.release();
  }

  const shadow = await openDataSource(databaseUrl, { schema, poolSize: 2, name: 'crs-verify' });
  try {
    await shadow.transaction(async (tx) => {
      for (const ddl of projection.ddl) await tx.query(ddl);
      await runner.replayInto(projection, tx, position);
    });
    const result: VerifyResult = { name, equal: true, position, tables: [] };
    for (const table of projection.tables) {
      const a = liveRows.get(table)!;
      const b = await tableRows(shadow, table);
      result.tables.push({ table, live: checksum(a), rebuilt: checksum(b), rows: a.length });
      if (!result.firstDifference) {
        const n = Math.max(a.length, b.length);
        for (let i = 0; i < n; i++) {
          if (a[i] !== b[i]) {
            result.equal = false;
            result.firstDifference = { table, index: i, live: a[i] ?? null, rebuilt: b[i] ?? null };
            break;
          }
        }
      }
    }
    return result;
  } finally {
    await shadow.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await shadow.destroy();
  }
}

async function tableRows(sql: { query(q: string): Promise<any> }, table: string): Promise<string[]> {
  const rows: { r: string }[] = await sql.query(`SELECT t::text AS r FROM ${table} t ORDER BY 1`);
  return rows.map((x) => x.r);
}

function checksum(rows: string[]): string {
  const h = createHash('sha256');
  for (const r of rows) h.update(r).update('\n');
  return h.digest('hex').slice(0, 16);
}
