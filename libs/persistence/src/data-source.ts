import { DataSource } from 'typeorm';

/** One Postgres connection pool (TypeORM) for read models, checkpoints and keys; `schema` isolates shadow rebuilds. */
export async function openDataSource(url: string, opts: { schema?: string; poolSize?: number; name?: string } = {}): Promise<DataSource> {
  const schema = opts.schema ?? 'public';
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const ds = new DataSource({
    type: 'postgres',
    url,
    schema,
    entities: [],
    synchronize: false,
    logging: false,
    applicationName: opts.name ?? 'crs',
    poolSize: opts.poolSize ?? 20,
    // Unqualified table names in projection SQL resolve to the chosen schema first.
    extra: { options: `-c search_path=${schema},public` },
  });
  await ds.initialize();
  if (schema !== 'public') await ds.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  return ds;
}

/** The minimal SQL surface projections and queries use: a TypeORM EntityManager or DataSource satisfies it. */
export interface Sql {
  query<T = any>(text: string, params?: unknown[]): Promise<T>;
}
