import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { createApp } from '@crs/api/app.factory';
import { configFromEnv } from '@crs/config';
import { CONNECTOR_FOLD, RESOURCE_FOLD } from '@crs/connector-sync/connector-streams';
import { decideConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import type { ConnectorStreamEvent, ResourceEvent } from '@crs/domain/connectors/connector.events';
import { decideResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import { streams } from '@crs/domain/streams';
import { handleCommand } from '@crs/eventstore/command-handling';
import { startEmbeddedPostgres } from '@crs/persistence/embedded-postgres';
import * as tokens from '@crs/platform/tokens';
import { parseArgs } from '../lib/args';
import { environmentMarkdown, runEnvironment } from '../lib/env';
import { benchKey } from '../lib/service';

const USAGE = `npm run bench:connectors -- [options]
  --rows 100000      rows in the source table
  --page-size 1000   the database provider's page size
  --out <dir>        where results go (default bench/results)`;

/**
 * Rows synced to searchable through the database provider: a source table of `--rows` rows on a second database of an
 * embedded Postgres, one connector and resource, a "sync now" request, and the time until the sync completed and
 * until every row is searchable (status graph_creation or completed), with the service's own worker doing the rest.
 */
async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { rows: 'string', 'page-size': 'string', out: 'string', help: 'boolean' });
  if (args.help) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const rows = Number(args.rows ?? 100_000);
  const pageSize = Number(args['page-size'] ?? 1000);
  const outDir = resolve(String(args.out ?? join(root, 'bench/results')));
  const environment = runEnvironment(root);
  const dataDir = mkdtempSync(join(tmpdir(), 'crs-bench-connectors-'));
  const pg = await startEmbeddedPostgres({ dataDir });
  const key = benchKey();
  try {
    const admin = new Client({ connectionString: pg.url });
    await admin.connect();
    await admin.query('CREATE DATABASE bench_source');
    await admin.end();
    const sourceUrl = new URL(pg.url);
    sourceUrl.pathname = '/bench_source';
    const source = new Client({ connectionString: sourceUrl.toString() });
    await source.connect();
    await source.query(`CREATE TABLE articles (id int PRIMARY KEY, title text NOT NULL, body text NOT NULL, category text NOT NULL, updated_at timestamptz NOT NULL)`);
    const seeded = Date.now();
    await source.query(
      `INSERT INTO articles SELECT i, 'Article ' || i, 'Article ' || i || ' reports on topic ' || (i % 97) || ' with a note about region ' || (i % 13) || ' and the figure ' || (i * 7919 % 100003) || '.',
              CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END, timestamptz '2024-01-01' + i * interval '1 second'
         FROM generate_series(1, $1) i`,
      [rows],
    );
    await source.query(`CREATE INDEX ON articles (updated_at, id)`);
    await source.query('ANALYZE articles');
    await source.end();
    console.log(`source table of ${rows} rows seeded in ${Date.now() - seeded} ms`);

    const config = configFromEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', BOOTSTRAP_API_KEY: key, CONNECTOR_POLL_MS: '200' }, pg.url);
    const { app, platform, close } = await createApp(config);
    const request = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
      const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
      return res.json();
    };
    await request('POST', '/databases', { database: 'bench' });
    for (;;) {
      const st = await request('GET', '/databases/status?database=bench');
      if (st?.data?.provisioned) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ds = platform.get(tokens.DATA_SOURCE);
    const store = platform.get(tokens.EVENT_STORE);
    const [{ id: databaseId }] = await ds.query(`SELECT id FROM rm_databases WHERE name = 'bench'`);
    const connectorId = randomUUID();
    const credentialsId = randomUUID();
    await platform.get(tokens.CONNECTOR_CREDENTIALS).put('default', credentialsId, { connection_string: sourceUrl.toString() });
    const ctx = { orgId: 'default', actor: 'bench' };
    await handleCommand<ConnectorState, ConnectorStreamEvent, ConnectorCommand>(store, streams.connector(connectorId), CONNECTOR_FOLD, decideConnector, { type: 'CreateConnector', connectorId, provider: 'postgres', databaseId, collection: 'default', credentialsId, providerAccountScope: 'bench' }, ctx);
    const resourceId = 'public.articles';
    const out = await handleCommand<ResourceState, ResourceEvent, ResourceCommand>(store, streams.connectorResource(connectorId, resourceId), RESOURCE_FOLD, decideResource, { type: 'ConfigureResource', connectorId, resourceId, resourceType: 'table', name: 'articles', options: { page_size: pageSize, filterable_columns: ['category'] } }, ctx);
    await platform.get(tokens.PROJECTION_RUNNER).waitFor(out.position!, ['connectors'], 30_000);

    const started = Date.now();
    await platform.get(tokens.CONNECTOR_SYNC_REQUESTS).request(connectorId, resourceId);
    let syncedMs: number | null = null;
    let searchableMs: number | null = null;
    let lastPrint = 0;
    const deadline = started + 9 * 60_000;
    while (Date.now() < deadline) {
      if (syncedMs === null) {
        const [row] = await ds.query(`SELECT state->'lastOutcome'->>'kind' AS outcome FROM rm_connector_resources WHERE connector_id = $1`, [connectorId]);
        if (row?.outcome === 'completed') syncedMs = Date.now() - started;
        else if (row?.outcome) throw new Error(`the sync ended ${row.outcome}`);
      }
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE database_id = $1 AND status IN ('graph_creation', 'completed')`, [databaseId]);
      if (Date.now() - lastPrint > 10_000) {
        lastPrint = Date.now();
        console.log(`${Math.round((Date.now() - started) / 1000)} s: ${n} searchable${syncedMs !== null ? `, sync completed in ${syncedMs} ms` : ''}`);
      }
      if (n >= rows && syncedMs !== null) {
        searchableMs = Date.now() - started;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const [{ n: searchable }] = await ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE database_id = $1 AND status IN ('graph_creation', 'completed')`, [databaseId]);
    await close();
    const result = {
      environment,
      configuration: { rows, pageSize, embedder: 'glove (default)', pipeline: config.pipeline },
      syncedMs,
      searchableMs,
      searchable,
      rowsPerSecondSynced: syncedMs ? Math.round((rows / syncedMs) * 1000) : null,
      rowsPerSecondSearchable: searchableMs ? Math.round((rows / searchableMs) * 1000) : null,
    };
    console.log(JSON.stringify(result, null, 2));
    writeFileSync(join(outDir, 'connector-sync.json'), JSON.stringify(result, null, 2) + '\n');
    writeFileSync(
      join(outDir, 'connector-sync.md'),
      [
        '# Connector sync: rows to searchable through the database provider',
        '',
        environmentMarkdown(environment),
        `- configuration: ${rows} rows (id, title, body, category, updated_at; an index on (updated_at, id)), page_size ${pageSize}, one connector and resource, glove embedder, pipeline defaults; embedded Postgres holds both the service's database and the source`,
        '- how: `npm run bench:connectors` seeds the source table, creates the connector and resource through the domain commands, requests a sync, and times it until the sync completed (every row appended as an item) and until every row is searchable (status graph_creation or completed).',
        '',
        '| measure | value |',
        '| --- | --- |',
        `| sync completed (rows appended as items) | ${syncedMs === null ? 'not within 9 minutes' : `${(syncedMs / 1000).toFixed(1)} s, ${result.rowsPerSecondSynced} rows/s`} |`,
        `| every row searchable | ${searchableMs === null ? `not within 9 minutes (${searchable} of ${rows})` : `${(searchableMs / 1000).toFixed(1)} s, **${result.rowsPerSecondSearchable} rows/s**`} |`,
        '',
      ].join('\n'),
    );
  } finally {
    await pg.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
