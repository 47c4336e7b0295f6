import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '@crs/api/app.factory';
import { configFromEnv } from '@crs/config';
import { startEmbeddedPostgres } from '@crs/persistence/embedded-postgres';
import * as tokens from '@crs/platform/tokens';
import { environmentMarkdown, type RunEnvironment } from '../lib/env';
import type { Progress } from '../lib/progress';
import { benchKey } from '../lib/service';
import { seedSource, type Minimum, type SourceName } from './sources';

export interface ProviderResult {
  provider: string;
  docs: number;
  seeded: string;
  seedMs: number;
  /** from the configure request (which requests the first sync) to the sync completed; null past the cap */
  syncedMs: number | null;
  /** from the same request to every document searchable (status graph_creation or completed); null past the cap */
  searchableMs: number | null;
  /** documents searchable when the run stopped waiting */
  searchable: number;
  docsPerSecondSearchable: number | null;
  firstSync: { calls: number; counts: unknown };
  unchangedSync: { ms: number; calls: number; byEndpoint: Record<string, number>; counts: unknown } | null;
  minimum: Minimum;
  /** what went wrong, when the provider did not get through */
  error?: string;
}

/** Where one provider's service keeps its database: a Postgres URL, and how to let it go. */
export type ServiceDatabase = (dataDir: string) => Promise<{ url: string; stop(): Promise<void> }>;

/** A fresh embedded Postgres in the provider's data directory (the bench's default). */
export const embeddedDatabase: ServiceDatabase = async (dataDir) => startEmbeddedPostgres({ dataDir });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Requests counted by endpoint, the most frequent first. */
function byEndpoint(requests: readonly string[], endpoint: (r: string) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(endpoint(r), (counts.get(endpoint(r)) ?? 0) + 1);
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/**
 * One provider against its fake, on a service of its own (a fresh database, an embedded Postgres unless `database`
 * says otherwise, and a fresh data directory, so what one provider leaves for the pipeline never slows the next): the
 * fake seeded with one resource of `docs` documents, the connector created and configured through the HTTP API, the
 * first sync timed to completed and to every document searchable, then a second sync of the unchanged resource with
 * the fake's requests counted by endpoint.
 */
export async function runProvider(name: SourceName, docs: number, capMs: number, progress: Progress, database: ServiceDatabase = embeddedDatabase): Promise<ProviderResult> {
  const dataDir = mkdtempSync(join(tmpdir(), `crs-bench-providers-${name}-`));
  const pg = await database(dataDir);
  const key = benchKey();
  const seedStarted = Date.now();
  const source = await seedSource(name, docs);
  const seedMs = Date.now() - seedStarted;
  progress.log(`${name}: fake seeded with ${docs} documents in ${seedMs} ms`);
  const config = configFromEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', BOOTSTRAP_API_KEY: key, CONNECTOR_POLL_MS: '200', CONNECTOR_ALLOW_PRIVATE_NETWORKS: 'true' }, pg.url);
  const { app, platform, close } = await createApp(config);
  const result: ProviderResult = {
    provider: name, docs, seeded: source.seeded, seedMs, syncedMs: null, searchableMs: null, searchable: 0, docsPerSecondSearchable: null,
    firstSync: { calls: 0, counts: null }, unchangedSync: null, minimum: source.minimum,
  };
  try {
    const request = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
      const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
      const json = res.json();
      if (res.statusCode >= 400) throw new Error(`${method} ${url} answered ${res.statusCode}: ${JSON.stringify(json.error ?? json)}`);
      return json.data;
    };
    await request('POST', '/databases', { database: 'bench' });
    while (!(await request('GET', '/databases/status?database=bench'))?.provisioned) await sleep(50);
    if (source.instance) platform.get(tokens.CONNECTOR_PROVIDERS).register(source.instance);
    const ds = platform.get(tokens.DATA_SOURCE);

    const created = await request('POST', '/connectors', { provider: source.provider, database: 'bench', credentials: source.credentials });
    const connectorId: string = created.connector_id;
    const lastSync = async () => (await request('GET', `/connectors/${connectorId}/status`)).resources[0]?.last_sync ?? null;
    const searchableNow = async (): Promise<number> =>
      (await ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND status IN ('graph_creation', 'completed')`, [connectorId]))[0].n;

    let mark = source.requests().length;
    const started = Date.now();
    await request('POST', `/connectors/${connectorId}/configure`, { resources: [source.resource] });
    const bar = progress.bar(`${name} searchable`, docs);
    let firstSyncId: string | null = null;
    while (Date.now() - started < capMs) {
      if (result.syncedMs === null) {
        const last = await lastSync();
        if (last?.outcome === 'completed') {
          result.syncedMs = Date.now() - started;
          firstSyncId = last.sync_id;
          result.firstSync = { calls: source.requests().length - mark, counts: last.counts };
          progress.log(`${name}: first sync completed in ${(result.syncedMs / 1000).toFixed(1)} s with ${result.firstSync.calls} API calls`);
        } else if (last?.outcome) throw new Error(`the first sync ended ${last.outcome}: ${last.message ?? last.reason ?? ''}`);
      }
      result.searchable = await searchableNow();
      bar.update(result.searchable);
      if (result.searchable >= docs && result.syncedMs !== null) {
        result.searchableMs = Date.now() - started;
        result.docsPerSecondSearchable = Math.round((docs / result.searchableMs) * 1000);
        break;
      }
      await sleep(250);
    }
    bar.stop();
    result.searchable = await searchableNow();

    if (firstSyncId !== null) {
      // A sync the service started by itself after the first one (and ended before this request) is not the one asked for.
      const previous = (await lastSync())?.sync_id ?? firstSyncId;
      mark = source.requests().length;
      const at = Date.now();
      await request('POST', `/connectors/${connectorId}/sync`);
      for (;;) {
        const last = await lastSync();
        if (last && last.sync_id !== firstSyncId && last.sync_id !== previous && last.outcome) {
          if (last.outcome !== 'completed') throw new Error(`the unchanged sync ended ${last.outcome}: ${last.message ?? last.reason ?? ''}`);
          const requests = source.requests().slice(mark);
          result.unchangedSync = { ms: Date.now() - at, calls: requests.length, byEndpoint: byEndpoint(requests, source.endpoint), counts: last.counts };
          break;
        }
        if (Date.now() - at > capMs) throw new Error(`the unchanged sync did not end within ${capMs / 1000} s`);
        await sleep(100);
      }
      progress.log(`${name}: unchanged sync: ${result.unchangedSync.calls} API calls in ${result.unchangedSync.ms} ms`);
    }
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    progress.log(`${name}: ${result.error}`);
  } finally {
    await close().catch(() => undefined);
    await source.stop().catch(() => undefined);
    await pg.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}

const seconds = (ms: number | null) => (ms === null ? '–' : (ms / 1000).toFixed(1));

export function providersMarkdown(environment: RunEnvironment, docs: number, capMs: number, results: ProviderResult[]): string {
  const lines = [
    '# Connector providers: documents to searchable and API calls of an unchanged sync, each against its fake',
    '',
    environmentMarkdown(environment),
    `- configuration: ${docs} documents in one resource per provider, glove embedder, pipeline defaults, each provider on a service of its own (fresh embedded Postgres and data directory) in the bench's process; a cap of ${capMs / 1000} s per provider to every document searchable`,
    '- how: `npm run bench:providers` seeds the provider\'s fake (`test/fakes/<provider>/`, on 127.0.0.1) with the resource, creates the connector (`POST /connectors`, with `CONNECTOR_ALLOW_PRIVATE_NETWORKS`) and configures the resource (`POST /connectors/{id}/configure`, which requests the first sync), and times from that request to the sync completed and to every document searchable (status graph_creation or completed). Then `POST /connectors/{id}/sync` syncs the unchanged resource, and the requests the fake answered from that request to the sync\'s end are counted by endpoint (method, path with ids folded, query parameter names).',
    '',
    '| provider | docs | first sync | every doc searchable | docs/s to searchable | API calls, first sync | API calls, unchanged sync | minimum for an unchanged sync |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    const searchable = r.searchableMs === null ? `not within ${capMs / 1000} s (${r.searchable} of ${r.docs})` : `${seconds(r.searchableMs)} s`;
    lines.push(
      `| ${r.provider} | ${r.docs} | ${r.syncedMs === null ? `not within ${capMs / 1000} s` : `${seconds(r.syncedMs)} s`} | ${searchable} | ${r.docsPerSecondSearchable === null ? '–' : `**${r.docsPerSecondSearchable}**`} | ${r.syncedMs === null ? '–' : r.firstSync.calls} | ${r.unchangedSync === null ? '–' : `**${r.unchangedSync.calls}**`} | ${r.minimum.calls} |`,
    );
  }
  lines.push('');
  for (const r of results) {
    lines.push(`## ${r.provider}`, '', `- resource: ${r.seeded}`);
    if (r.error) lines.push(`- the run stopped: ${r.error}`);
    if (r.unchangedSync) {
      lines.push(`- unchanged sync: ${r.unchangedSync.calls} API calls in ${seconds(r.unchangedSync.ms)} s, counts ${JSON.stringify(r.unchangedSync.counts)}`, '');
      lines.push('| endpoint | calls |', '| --- | ---: |');
      for (const [endpoint, n] of Object.entries(r.unchangedSync.byEndpoint)) lines.push(`| \`${endpoint}\` | ${n} |`);
      lines.push('');
    }
    lines.push(`- minimum: ${r.minimum.calls} calls: ${r.minimum.how}.`, `- beyond the minimum: ${r.minimum.beyond}.`, '');
  }
  return lines.join('\n');
}
