import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { configFromEnv } from '@crs/config';
import { API_KEYS, APP_CONFIG, BLOB_STORE, DATA_SOURCE, EMBEDDER, EVENT_STORE, openPlatform, type Platform, PROJECTION_RUNNER, SEARCH_CATALOG, VECTOR_SPACES } from '@crs/platform';
import { startEmbeddedPostgres } from '@crs/persistence/embedded-postgres';
import { verifyProjection } from '@crs/persistence/projection-verifier';
import { rebuildSearchIndex, verifySearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { reembedDatabase } from './reembed-database';
import { aclHistory, visibleAt } from './audit';
import { assertDatabaseName } from '@crs/domain/names';
import { FeedbackRepository } from './feedback-report';
import { findDatabaseByName, organizationOfDatabase } from '@crs/projections/databases/databases.queries';

/** The search index is rebuilt by generation swap rather than in a Postgres transaction. */
const SEARCH_INDEX = 'search-index';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  /** show progress bars (off when not a terminal, and in tests) */
  progress: boolean;
}

/**
 * `crs`: the ops and audit command line. It opens the same infrastructure as the API (DATABASE_URL, or the
 * embedded Postgres under DATA_DIR, attached when the server is running) and never talks HTTP.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let platform: Platform | undefined;
  let stopPg: (() => Promise<void>) | undefined;
  const open = async () => {
    if (platform) return platform;
    let config = configFromEnv(io.env);
    if (!config.databaseUrl) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'cli' });
      config = { ...config, databaseUrl: pg.url };
      stopPg = () => pg.stop();
    }
    platform = await openPlatform(config, { info: () => undefined, error: (o) => io.err(JSON.stringify(o)) });
    return platform;
  };
  let code = 0;
  const program = new Command('crs')
    .description('Context Retrieval Service: keys, event log, projections')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  const keys = program.command('keys').description('API keys (only a hash of each secret is stored)');
  keys
    .command('create')
    .description('create a key and print its secret once')
    .requiredOption('--org <org>', 'organization id (created if new)')
    .option('--databases <names>', 'comma-separated databases the key may reach (default: all of the organization)')
    .option('--label <label>', 'a note to recognise the key by')
    .action(async (o: { org: string; databases?: string; label?: string }) => {
      const i = await open();
      // Given, the option must name databases: an empty value (an unset shell variable) must not mean all of them.
      const databases = o.databases === undefined ? null : o.databases.split(',').map((s) => s.trim()).filter(Boolean);
      if (databases && !databases.length) throw new Error('--databases names no database; leave the option out for a key that reaches every database of the organization');
      for (const name of databases ?? []) assertDatabaseName(name, `--databases entry '${name}'`);
      const { key, record } = await i.get(API_KEYS).create(o.org, { databases, label: o.label });
      io.out(key);
      io.err(`Created key ${record.prefix} for organization ${record.orgId} (${databases ? `databases: ${databases.join(', ')}` : 'all databases'}). The secret is shown only this once.`);
    });
  keys
    .command('list')
    .description('list the keys (never their secrets)')
    .option('--org <org>', 'only this organization')
    .action(async (o: { org?: string }) => {
      const i = await open();
      for (const k of await i.get(API_KEYS).list(o.org)) {
        io.out(JSON.stringify({ prefix: k.prefix, org: k.orgId, databases: k.databases ?? 'all', label: k.label, created_at: k.createdAt, revoked_at: k.revokedAt }));
      }
    });
  keys
    .command('revoke <prefix>')
    .description('revoke a key: refused from its next request')
    .action(async (prefix: string) => {
      const i = await open();
      if (await i.get(API_KEYS).revoke(prefix)) io.out(`revoked ${prefix}`);
      else {
        io.err(`no active key with prefix ${prefix}`);
        code = 1;
      }
    });

  const projections = program.command('projections').description('read models built from the event log');
  projections.command('status').description('each projection and processor: checkpoint and lag behind the log').action(async () => {
    const i = await open();
    for (const s of await i.get(PROJECTION_RUNNER).status()) io.out(`${s.name.padEnd(24)} ${s.kind.padEnd(10)} position ${String(s.position).padStart(8)}  head ${String(s.head).padStart(8)}  lag ${s.lag}${s.error ? `  error: ${s.error}` : ''}`);
  });
  projections
    .command('rebuild <name>')
    .description('rebuild a read model (or all) from the whole log, atomically')
    .action(async (name: string) => {
      const i = await open();
      const names = name === 'all' ? [...i.get(PROJECTION_RUNNER).readModels.map((p) => p.name), SEARCH_INDEX] : [name];
      for (const n of names) {
        if (n === SEARCH_INDEX) {
          const r = await rebuildSearchIndex(i.get(EVENT_STORE), i.get(SEARCH_CATALOG), new SearchIndexSubscriber(i.get(DATA_SOURCE), i.get(SEARCH_CATALOG), i.get(BLOB_STORE), i.get(VECTOR_SPACES)));
          io.out(`${n}: rebuilt ${r.indexes} index(es) from ${r.events} events up to position ${r.position} in ${r.ms} ms (${Math.round((r.events / Math.max(1, r.ms)) * 1000)} events/s)`);
          continue;
        }
        const bar = io.progress ? new SingleBar({ format: `${n.padEnd(20)} [{bar}] {value}/{total} positions`, hideCursor: true }, Presets.shades_classic) : undefined;
        bar?.start(Math.max(1, await i.get(EVENT_STORE).headPosition()), 0);
        const r = await i.get(PROJECTION_RUNNER).rebuild(n, (p, head) => {
          bar?.setTotal(Math.max(1, head));
          bar?.update(p);
        });
        bar?.stop();
        io.out(`${n}: rebuilt from ${r.events} events up to position ${r.position} in ${r.ms} ms (${Math.round((r.events / Math.max(1, r.ms)) * 1000)} events/s)`);
      }
    });
  projections
    .command('verify <name>')
    .description('rebuild into a shadow schema and compare with the live read model')
    .action(async (name: string) => {
      const i = await open();
      const names = name === 'all' ? [...i.get(PROJECTION_RUNNER).readModels.map((p) => p.name), SEARCH_INDEX] : [name];
      for (const n of names) {
        if (n === SEARCH_INDEX) {
          const r = await verifySearchIndex(i.get(EVENT_STORE), i.get(SEARCH_CATALOG), new SearchIndexSubscriber(i.get(DATA_SOURCE), i.get(SEARCH_CATALOG), i.get(BLOB_STORE), i.get(VECTOR_SPACES)));
          if (r.equal) io.out(`${n}: equal at position ${r.position} (${r.indexes.map((x) => `${x.key} ${x.chunks} chunks`).join(', ') || 'no indexes'})`);
          else if (r.behind) {
            code = 1;
            io.out(
              `${n}: NOT COMPARED: the live search index has handled the log up to position ${r.behind.indexedTo}, the head is ${r.position} ` +
                `(the first event it has yet to handle is at ${r.behind.pending}). Is the service running? Run verify again once it has caught up.`,
            );
          } else {
            code = 1;
            const d = r.firstDifference!;
            io.out(`${n}: DIFFERENT at position ${r.position}: first difference in ${d.index} chunk ${d.chunkId}\n  live:    ${d.live?.slice(0, 300)}\n  rebuilt: ${d.rebuilt?.slice(0, 300)}`);
            if (r.unsettled) io.out(`  (writes were arriving: ${r.unsettled.appended} events appended during the last of 3 comparisons; the index keeps an item's latest attributes, so run verify again once they stop)`);
          }
          continue;
        }
        const r = await verifyProjection(i.get(PROJECTION_RUNNER), i.get(DATA_SOURCE), i.get(APP_CONFIG).databaseUrl, n);
        if (r.equal) io.out(`${n}: equal at position ${r.position} (${r.tables.map((t) => `${t.table} ${t.rows} rows ${t.live}`).join(', ')})`);
        else {
          code = 1;
          const d = r.firstDifference!;
          io.out(`${n}: DIFFERENT at position ${r.position}: first difference in ${d.table} row ${d.index}\n  live:    ${d.live}\n  rebuilt: ${d.rebuilt}`);
        }
      }
    });

  const audit = program.command('audit').description('answers from the event log: who could see what, when');
  const resolveDb = async (o: { database: string; org: string }) => {
    const i = await open();
    const db = /^[0-9a-f-]{36}$/.test(o.database) ? { id: o.database } : await findDatabaseByName(i.get(DATA_SOURCE), o.org, o.database);
    if (!db) throw new Error(`database ${o.database} not found in organization ${o.org}`);
    return { i, databaseId: db.id };
  };
  audit
    .command('acl <item-id>')
    .description('every ACL change of an item: time, position, actor, request id')
    .requiredOption('--database <name-or-id>', 'database of the item')
    .option('--collection <name>', 'collection of the item', 'default')
    .option('--org <org>', 'organization (to resolve --database by name)', 'default')
    .action(async (itemId: string, o: { database: string; collection: string; org: string }) => {
      const { i, databaseId } = await resolveDb(o);
      const history = await aclHistory(i.get(EVENT_STORE), databaseId, o.collection, itemId);
      if (!history.length) {
        io.err(`no item ${itemId} in collection ${o.collection}`);
        code = 1;
      }
      for (const h of history) io.out(JSON.stringify(h));
    });
  audit
    .command('visible <item-id>')
    .description('could a principal see the item at a moment, and by which rule')
    .requiredOption('--database <name-or-id>', 'database of the item')
    .requiredOption('--principal <principal>', "the caller's emails or principals, as a query's acl: repeat the option or separate with commas", (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((x) => x.trim()).filter(Boolean)])
    .option('--at <time>', 'RFC 3339 time (default: now)')
    .option('--collection <name>', 'collection of the item', 'default')
    .option('--org <org>', 'organization (to resolve --database by name)', 'default')
    .action(async (itemId: string, o: { database: string; principal: string[]; at?: string; collection: string; org: string }) => {
      const { i, databaseId } = await resolveDb(o);
      const at = o.at ? new Date(o.at) : new Date();
      if (Number.isNaN(at.getTime())) throw new Error(`--at ${o.at} is not a time`);
      const v = await visibleAt(i.get(EVENT_STORE), databaseId, o.collection, itemId, o.principal, at);
      if (!v) {
        io.err(`no item ${itemId} in collection ${o.collection}`);
        code = 1;
        return;
      }
      io.out(JSON.stringify({ item: itemId, principals: o.principal, at: at.toISOString(), ...v }));
    });

  program
    .command('databases')
    .description('database operations')
    .command('reembed <database>')
    .description("move a database to this process's embedder (EMBEDDINGS_PROVIDER...): rebuild its indexes with it, requeue items that errored with EMBEDDER_MISMATCH")
    .option('--org <org>', 'organization (to resolve the database by name)', 'default')
    .action(async (database: string, o: { org: string }) => {
      const { i, databaseId } = await resolveDb({ database, org: o.org });
      const orgId = await organizationOfDatabase(i.get(DATA_SOURCE), databaseId);
      if (orgId === undefined) throw new Error(`database ${database} not found`);
      // The read models must follow the change while this runs (a running service does it too; runs are safe side by side).
      i.get(PROJECTION_RUNNER).start((s) => s.kind === 'read-model');
      const bar = io.progress ? new SingleBar({ format: `reembed [{bar}] {value}/{total} positions`, hideCursor: true }, Presets.shades_classic) : undefined;
      bar?.start(Math.max(1, await i.get(EVENT_STORE).headPosition()), 0);
      const r = await reembedDatabase(
        { ds: i.get(DATA_SOURCE), store: i.get(EVENT_STORE), runner: i.get(PROJECTION_RUNNER), catalog: i.get(SEARCH_CATALOG), subscriber: new SearchIndexSubscriber(i.get(DATA_SOURCE), i.get(SEARCH_CATALOG), i.get(BLOB_STORE), i.get(VECTOR_SPACES)), embedder: i.get(EMBEDDER) },
        { id: databaseId, orgId },
        { orgId, actor: 'cli' },
        (p, head) => {
          bar?.setTotal(Math.max(1, head));
          bar?.update(p);
        },
      );
      bar?.stop();
      if (!r.changed) io.out(`${database}: already embeds with ${r.embedder.modelId} (${r.embedder.dimensions} dimensions); nothing to do`);
      else io.out(`${database}: ${r.previous.modelId} (${r.previous.dimensions}) -> ${r.embedder.modelId} (${r.embedder.dimensions}); rebuilt ${r.indexes} index(es) from ${r.events} events, requeued ${r.requeued} item(s), ${r.ms} ms`);
    });

  program
    .command('events')
    .description('the event log')
    .command('read')
    .description('print events as NDJSON')
    .option('--stream <stream>', 'one stream (default: the whole log)')
    .option('--from <position>', 'start after this global position (whole log) or at this revision (stream)', wholeNumber('--from'), '0')
    .option('--database <name-or-id>', 'only events of this database (id, or name of the default organization)')
    .option('--org <org>', 'organization used to resolve --database by name', 'default')
    .option('--limit <n>', 'stop after n events', wholeNumber('--limit'))
    .action(async (o: { stream?: string; from: string; database?: string; org: string; limit?: string }) => {
      const i = await open();
      const limit = o.limit ? Number(o.limit) : Infinity;
      let databaseId: string | undefined;
      if (o.database) databaseId = /^[0-9a-f-]{36}$/.test(o.database) ? o.database : (await findDatabaseByName(i.get(DATA_SOURCE), o.org, o.database))?.id;
      if (o.database && !databaseId) {
        throw new Error(`database ${o.database} not found in organization ${o.org} (a deleted database is named by its id: its DatabaseDeleted record is on the stream databases-${o.org})`);
      }
      let printed = 0;
      const emit = (e: any) => {
        if (databaseId && e.metadata?.databaseId !== databaseId && e.data?.databaseId !== databaseId) return;
        io.out(JSON.stringify({ position: e.position, stream: e.stream, revision: e.revision, type: e.type, data: e.data, metadata: e.metadata }));
        printed++;
      };
      if (o.stream) {
        for (const e of await i.get(EVENT_STORE).readStream(o.stream, { fromRevision: Number(o.from) })) if (printed < limit) emit(e);
        return;
      }
      let after = Number(o.from);
      while (printed < limit) {
        const page = await i.get(EVENT_STORE).readAll({ after, maxCount: 1000 });
        if (!page.length) break;
        for (const e of page) if (printed < limit) emit(e);
        after = page[page.length - 1].position;
      }
    });

  const feedback = program.command('feedback').description('feedback submitted through POST /feedback (docs/feedback.md)');
  const feedbackScope = async (o: { database?: string; org: string }) => {
    const i = await open();
    if (!o.database) return { i, repo: new FeedbackRepository(i.get(DATA_SOURCE)), databaseId: undefined, databaseName: undefined };
    const db = /^[0-9a-f-]{36}$/.test(o.database) ? { id: o.database, name: o.database } : await findDatabaseByName(i.get(DATA_SOURCE), o.org, o.database);
    if (!db) throw new Error(`database ${o.database} not found in organization ${o.org}`);
    return { i, repo: new FeedbackRepository(i.get(DATA_SOURCE)), databaseId: db.id, databaseName: db.name };
  };
  feedback
    .command('export')
    .description('every submission as NDJSON, oldest first, with the linked query and its recorded results')
    .option('--database <name-or-id>', 'only feedback about this database')
    .option('--since <time>', 'only feedback recorded at or after this RFC 3339 time')
    .option('--org <org>', 'organization', 'default')
    .action(async (o: { database?: string; since?: string; org: string }) => {
      const since = o.since ? new Date(o.since) : undefined;
      if (since && Number.isNaN(since.getTime())) throw new Error(`--since ${o.since} is not a time`);
      const { repo, databaseId } = await feedbackScope(o);
      for (const line of await repo.export(o.org, { databaseId, since })) io.out(JSON.stringify(line));
    });
  feedback
    .command('report')
    .description('counts, and retrieval quality (recall@k, MRR) of the recorded results scored against ground_truth.source_ids')
    .option('--database <name-or-id>', 'only feedback about this database')
    .option('--org <org>', 'organization', 'default')
    .option('--json', 'print the report as one JSON object (with per-query scores)')
    .action(async (o: { database?: string; org: string; json?: boolean }) => {
      const { repo, databaseId, databaseName } = await feedbackScope(o);
      const r = await repo.report(o.org, { databaseId, databaseName });
      if (o.json) {
        io.out(JSON.stringify(r));
        return;
      }
      const e = r.evaluation;
      io.out(`feedback ${r.organization}${r.database ? ` / ${r.database}` : ''}: ${r.submissions} submissions (${r.linked} linked to a recorded query, ${r.unlinked} unlinked), ${r.with_ground_truth} with ground truth`);
      io.out(`ratings: positive ${r.ratings.positive}, negative ${r.ratings.negative}, neutral ${r.ratings.neutral}, none ${r.ratings.none}; sources: user ${r.sources.user}, agent ${r.sources.agent}`);
      if (!e.queries) io.out('retrieval quality: no linked query has ground_truth.source_ids yet');
      else io.out(`retrieval quality over ${e.queries} queries with ground_truth.source_ids: ${Object.entries(e.recall_at).map(([k, v]) => `recall@${k} ${v.toFixed(3)}`).join('  ')}  MRR ${e.mrr.toFixed(3)}`);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) code = err.exitCode;
    else {
      io.err(`error: ${(err as Error).message}`);
      code = 1;
    }
  } finally {
    await platform?.close();
    await stopPg?.();
  }
  return code;
}

/** An option value that must be a whole number (0, 1, 2, ...): anything else stops the command with a clear error. */
function wholeNumber(option: string) {
  return (value: string): string => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`${option} must be a whole number (0, 1, 2, ...), not '${value}'`);
    return value.trim();
  };
}
