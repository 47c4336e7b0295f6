import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connect, MatchQuery, Operator, type Connection, type Table } from '@lancedb/lancedb';
import Fastify from 'fastify';
import { callerPrincipals } from '@crs/domain/acl';
import { GloveSifEmbedder } from '@crs/embeddings/glove-sif.embedder';
import { FTS_COLUMN, LEAN_COLUMNS } from '@crs/search/lancedb-chunk-table';
import { lanceWhere } from '@crs/search/lancedb-where';
import type { Scalar, SearchFilter } from '@crs/search/search-index.port';
import { candidatePool, POOL_DEFAULTS } from '@crs/domain/retrieval/pool-size';
import type { QueryBody } from '../lib/client';
import { latencySummary, round } from '../lib/stats';

/**
 * The floor: the same queries sent straight to the search engine, without the service. It opens the service's
 * LanceDB tables (`<DATA_DIR>/lancedb`) with @lancedb/lancedb, embeds the query with the same GloVe-SIF embedder,
 * and runs the same full-text and vector searches with the same prefilter, columns (the lean ones) and candidate pool as the service
 * (the service's default pool for the body's max_results: 30 per engine call for 10, 150 for 50), for each store the query type covers. No fusion,
 * no read-model check, no Postgres, no event.
 */
export const FLOOR_POOL = candidatePool(POOL_DEFAULTS, 10);

/** The service's default pool per engine call for a body's `max_results` (10 when absent). */
const poolFor = (body: { max_results?: number }) => candidatePool(POOL_DEFAULTS, body.max_results ?? 10);

export interface FloorTables {
  memory?: string;
  knowledge?: string;
}

/** The live LanceDB tables of a database: `m_<id>_g<n>` / `k_<id>_g<n>` (highest generation). */
export async function findTables(lanceDir: string, databaseId: string): Promise<FloorTables> {
  const db = await connect(lanceDir);
  try {
    const names = await db.tableNames();
    const id = databaseId.replace(/-/g, '');
    const latest = (prefix: string) =>
      names
        .filter((n) => n.startsWith(`${prefix}_${id}_g`))
        .sort((a, b) => Number(b.split('_g').pop()) - Number(a.split('_g').pop()))[0];
    return { memory: latest('m'), knowledge: latest('k') };
  } finally {
    db.close();
  }
}

/** The service's split of metadata_filters: schema attributes at the top level, free-form ones under additional_metadata. */
function filterOf(body: Partial<QueryBody>, now: number): SearchFilter {
  const metadata: Record<string, Scalar | Scalar[]> = {};
  let additionalMetadata: Record<string, Scalar | Scalar[]> | undefined;
  for (const [k, v] of Object.entries(body.metadata_filters ?? {})) {
    if (k === 'additional_metadata') additionalMetadata = v as Record<string, Scalar>;
    else metadata[k] = v as Scalar;
  }
  return {
    collections: [body.collection ?? 'default'],
    now,
    includeApps: true,
    principalsAny: callerPrincipals(body.acl),
    metadata: Object.keys(metadata).length ? metadata : undefined,
    additionalMetadata,
  };
}

export class EngineFloor {
  private constructor(
    private readonly db: Connection,
    private readonly tables: { memory?: Table; knowledge?: Table },
    private readonly embedder: GloveSifEmbedder,
  ) {}

  static async open(lanceDir: string, names: FloorTables): Promise<EngineFloor> {
    // Every read sees the table's newest version, as the service's reads do: the service keeps superseded versions
    // only SEARCH_VERSION_RETENTION_SECONDS, so a table pinned to the version it was opened at loses its files.
    const db = await connect(lanceDir, { readConsistencyInterval: 0 });
    const tables: { memory?: Table; knowledge?: Table } = {};
    if (names.memory) tables.memory = await db.openTable(names.memory);
    if (names.knowledge) tables.knowledge = await db.openTable(names.knowledge);
    const embedder = new GloveSifEmbedder();
    await embedder.load();
    return new EngineFloor(db, tables, embedder);
  }

  /** One query: embed, then full-text and vector candidates per store (in parallel, as the service does). Returns the candidate count. */
  async search(body: Partial<QueryBody> & { query: string }): Promise<number> {
    const type = body.type ?? 'all';
    const stores = type === 'all' ? (['knowledge', 'memory'] as const) : [type];
    const where = lanceWhere(filterOf(body, Date.now()));
    const vectorOnly = body.alpha === 1;
    const keywordOnly = body.query_by === 'text' || body.alpha === 0;
    const vector = keywordOnly ? null : (await this.embedder.embed([body.query]))[0];
    const counts = await Promise.all(
      stores.map(async (store) => {
        const table = this.tables[store];
        if (!table) return 0;
        const [kw, vec] = await Promise.all([
          vectorOnly
            ? Promise.resolve(0)
            : (() => {
                const q = table.query().fullTextSearch(new MatchQuery(body.query, FTS_COLUMN, { operator: Operator.Or })).select([...LEAN_COLUMNS, '_score']).limit(poolFor(body));
                if (where) q.where(where);
                return q.toArrow().then((r) => r.numRows);
              })(),
          vector
            ? (() => {
                const q = table.vectorSearch(vector).distanceType('cosine').select([...LEAN_COLUMNS, '_distance']).limit(poolFor(body));
                if (where) q.where(where);
                return q.toArrow().then((r) => r.numRows);
              })()
            : Promise.resolve(0),
        ]);
        return kw + vec;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  close(): void {
    this.tables.memory?.close();
    this.tables.knowledge?.close();
    this.db.close();
  }
}

export interface InProcessResult {
  connections: number;
  durationS: number;
  requests: number;
  rps: number;
  latencyMs: ReturnType<typeof latencySummary>;
  meanCandidates: number;
}

/** The engine floor in this process (no HTTP): `concurrency` loops for `durationS`, each timing its own calls. */
export async function measureEngineInProcess(floor: EngineFloor, nextBody: () => Partial<QueryBody> & { query: string }, concurrency: number, durationS: number): Promise<InProcessResult> {
  const times: number[] = [];
  let candidates = 0;
  const deadline = performance.now() + durationS * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const found = await floor.search(nextBody());
      candidates += found;
      times.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  return { connections: concurrency, durationS: round(elapsed, 2), requests: times.length, rps: round(times.length / elapsed, 1), latencyMs: latencySummary(times), meanCandidates: round(candidates / Math.max(1, times.length), 1) };
}

export interface FloorServer {
  url: string;
  close(): Promise<void>;
}

/** A fixed JSON answer of the envelope's shape (what the cheapest possible route costs). */
export const FIXED_JSON = { success: true, data: { chunks: [] }, error: null, meta: { api_version: '2.0.1' } };

/**
 * A minimal Fastify server: `POST /fixed` answers FIXED_JSON; `POST /engine` (when tables are given) runs the
 * engine floor for a /query body and answers the candidate count. Same load, same HTTP stack family as the service.
 */
export async function startFloorServer(opts: { lanceDir?: string; tables?: FloorTables; port?: number }): Promise<FloorServer> {
  const app = Fastify({ logger: false });
  const floor = opts.lanceDir && opts.tables ? await EngineFloor.open(opts.lanceDir, opts.tables) : undefined;
  const fixed = JSON.stringify(FIXED_JSON);
  app.post('/fixed', async (_req, reply) => reply.type('application/json').send(fixed));
  if (floor) app.post('/engine', async (req) => ({ success: true, data: { candidates: await floor.search(req.body as QueryBody) } }));
  const address = await app.listen({ port: opts.port ?? 0, host: '127.0.0.1' });
  return {
    url: address.replace('localhost', '127.0.0.1'),
    async close() {
      await app.close();
      floor?.close();
    },
  };
}

/** The floor server as its own process (`node dist/bench/speed/floor-server.main.js <json>`), so it never shares a CPU thread with the load generator. */
export async function spawnFloorServer(root: string, opts: { lanceDir?: string; tables?: FloorTables }): Promise<FloorServer & { pid: number }> {
  const main = join(root, 'dist/bench/speed/floor-server.main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  const child = spawn(process.execPath, [main, JSON.stringify(opts)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('floor server did not start')), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /floor listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    void exited.then(() => reject(new Error(`floor server exited: ${out}`)));
  });
  return {
    url,
    pid: child.pid!,
    async close() {
      child.kill('SIGINT');
      await exited;
    },
  };
}
