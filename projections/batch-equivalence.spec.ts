import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DomainEventType } from '@crs/domain/domain-event';
import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { BlobStore } from '@crs/persistence/blob-store';
import type { ExtractedGraph } from '@crs/ingestion/graph/extract-graph';
import { createTestDatabase } from '@crs/test/support/test-database';
import { openDataSource } from '@crs/persistence/data-source';
import { ProjectionRunner } from '@crs/persistence/projection-runner';
import { expectBatchEquivalent } from '@crs/test/support/projection-spec';
import { itemsProjection } from '@crs/projections/items/items.projection';
import { blobRefsProjection } from '@crs/projections/blob-refs/blob-refs.projection';
import { seededRandom } from '@crs/bench/lib/prng';
import { graphProjection } from '@crs/projections/graph/graph.projection';
import { queriesProjection } from '@crs/projections/queries/queries.projection';
import { webhookOutboxProjection } from '@crs/projections/webhook-outbox/webhook-outbox.projection';

/** mulberry32 (bench/lib/prng.ts): seeded, so a failing sequence is reproducible from its seed. */
const seeded = seededRandom;

const DBS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const COLLECTIONS = ['default', 'temp'];
const STATUSES = ['queued', 'processing', 'graph_creation', 'completed', 'errored'];
const ENTITY_KEYS = ['ada', 'babbage', 'london', 'engine', 'acme', 'teal', 'x@corp.io', '1843'];
const TYPES = ['person', 'place', 'organization', 'date', 'email', 'concept'];

interface ItemState {
  databaseId: string;
  itemKey: string;
  itemId: string;
  collection: string;
  store: 'memory' | 'knowledge';
  stream: string;
  revision: number;
  contentVersion: number;
}

/**
 * A realistic random log for the item read models: items ingested (and re-ingested) through their pipeline
 * (statuses, chunks, graphs, stale versions among them), metadata and ACL changes, deletions and re-ingests of
 * deleted items (their stream restarts), collection and database deletions, recorded queries, and now and then an
 * event delivered again, as an at-least-once subscription may.
 */
async function randomLog(random: () => number, blobs: BlobStore, n: number): Promise<RecordedEvent[]> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const events: RecordedEvent[] = [];
  const items = new Map<string, ItemState>();
  let position = 0;
  let second = 0;
  const requestIds: string[] = [];
  const emit = (type: DomainEventType, data: any, item?: ItemState, orgId = 'org1') => {
    position += 1;
    second += 1 + Math.floor(random() * 3);
    const revision = item ? item.revision++ : 0;
    const e = {
      type,
      data,
      stream: item?.stream ?? 'other',
      revision,
      position,
      metadata: { eventId: `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`, occurredAt: new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString(), orgId, actor: 'test' },
    } as RecordedEvent; // a type held in a variable: too many union members for the compiler to match it
    events.push(e);
    return e;
  };
  const ref = (s: ItemState) => ({ databaseId: s.databaseId, itemKey: s.itemKey, itemId: s.itemId, collection: s.collection, store: s.store });

  while (events.length < n) {
    const r = random();
    const existing = [...items.values()];
    if (r < 0.22 || existing.length < 3) {
      // Ingest: a new item, or a new content version of one (sometimes of a deleted one, whose stream restarted).
      const reuse = existing.length && random() < 0.3 ? pick(existing) : undefined;
      const databaseId = reuse?.databaseId ?? pick(DBS);
      const id = reuse?.itemId ?? `doc-${Math.floor(random() * 40)}`;
      const collection = reuse?.collection ?? pick(COLLECTIONS);
      // 32 hex digits hashing the collection, as itemKey makes them (blob-refs holds a key as a uuid).
      const key = createHash('sha256').update(`${collection}:${id}`).digest('hex').slice(0, 32);
      const state: ItemState = items.get(`${databaseId}/${key}`) ?? { databaseId, itemKey: key, itemId: id, collection, store: random() < 0.5 ? 'memory' : 'knowledge', stream: `item-${databaseId}-${key}`, revision: 0, contentVersion: 0 };
      items.set(`${databaseId}/${key}`, state);
      state.contentVersion = state.revision;
      emit(
        'ItemIngested',
        {
          ...ref(state),
          kind: pick(['memory', 'file', 'app']),
          title: random() < 0.5 ? null : `Title ${Math.floor(random() * 100)} "quoted", {braced} \\ back`,
          content: { sha256: 'a'.repeat(64), bytes: Math.floor(random() * 5000), contentType: 'text/plain', ...(random() < 0.5 ? { filename: 'notes.md' } : {}) },
          pairs: random() < 0.2,
          isMarkdown: random() < 0.3,
          infer: random() < 0.2,
          customInstructions: random() < 0.8 ? null : 'be brief',
          userName: random() < 0.7 ? null : 'ann',
          expiresAt: random() < 0.8 ? null : '2027-03-04T05:06:07.891Z',
          metadata: random() < 0.5 ? {} : { team: pick(['x', 'y']), n: Math.floor(random() * 10) },
          additionalMetadata: random() < 0.5 ? {} : { source: 'chat', nested: { a: [1, 'two', null] } },
          relations: random() < 0.8 ? [] : ['other-doc'],
          ...(random() < 0.5 ? { acl: ['ann@corp.io', 'group:okta:eng'] } : {}),
          ...(random() < 0.3 ? { appKind: 'ticket', appProvider: 'jira' } : {}),
          sourceType: 'text',
        },
        state,
      );
      continue;
    }
    const s = pick(existing);
    const version = random() < 0.85 ? s.contentVersion : Math.max(0, s.contentVersion - 1 - Math.floor(random() * 3));
    if (r < 0.45) {
      const status = pick(STATUSES);
      emit('StatusAdvanced', { ...ref(s), contentVersion: version, status, ...(status === 'errored' ? { errorCode: 'parse_failed', message: 'bad input' } : {}) }, s);
    } else if (r < 0.55) {
      emit('ItemChunked', { databaseId: s.databaseId, itemKey: s.itemKey, contentVersion: version, chunksSha256: 'b'.repeat(64), chunkCount: 1 + Math.floor(random() * 9), embedder: 'glove', format: 'text', parsedBytes: 10 }, s);
    } else if (r < 0.68) {
      const graph = randomGraph(random);
      const sha = random() < 0.08 ? 'f'.repeat(64) : await blobs.put(s.databaseId, JSON.stringify(graph)); // now and then a blob that is gone
      emit('GraphExtracted', { databaseId: s.databaseId, itemKey: s.itemKey, contentVersion: version, collection: s.collection, graphSha256: sha, entityCount: graph.entities.length, relationCount: graph.relations.length, extractor: 'test' }, s);
    } else if (r < 0.74) {
      emit(
        'ItemMetadataUpdated',
        {
          ...ref(s),
          ...(random() < 0.6 ? { metadata: { team: pick(['x', 'y', 'z']) } } : {}),
          ...(random() < 0.5 ? { additionalMetadata: { reviewed: random() < 0.5 } } : {}),
          ...(random() < 0.4 ? { title: random() < 0.5 ? null : 'Renamed' } : {}),
        },
        s,
      );
    } else if (r < 0.77) {
      emit('AclChanged', { ...ref(s), acl: random() < 0.3 ? ['__private__'] : ['bob@corp.io'], previous: null }, s);
    } else if (r < 0.79) {
      const permission = random() < 0.3 ? null : { status: 'captured', acl: random() < 0.5 ? ['user_email:ada@corp.io'] : null };
      emit('ProviderPermissionChanged', { ...ref(s), permission, previous: null }, s);
    } else if (r < 0.84) {
      emit('ItemDeleted', ref(s), s);
      s.revision = 0; // the stream is deleted with the item: a re-ingest starts again at revision 0
    } else if (r < 0.95) {
      const requestId = requestIds.length && random() < 0.15 ? pick(requestIds) : `33333333-3333-4333-8333-${String(events.length).padStart(12, '0')}`;
      requestIds.push(requestId);
      const collections = pick([null, ['temp'], ['default'], ['default', 'temp'], ['temp', 'temp']]);
      emit('QueryRecorded', { requestId, databaseId: pick(DBS), collections, query: `what about ${pick(ENTITY_KEYS)}?`, type: 'all', mode: 'fast', results: [{ id: 'doc-1', score: random() }], logPosition: position });
    } else if (r < 0.955) {
      emit('CollectionDeleted', { databaseId: pick(DBS), collection: 'temp' });
    } else if (r < 0.96) {
      emit('DatabaseDeleted', { databaseId: DBS[1], name: 'beta' });
    } else {
      // Delivered again (at-least-once): a recent recorded event a second time, after what followed it.
      events.push(events[Math.max(0, events.length - 1 - Math.floor(random() * 30))]);
    }
  }
  return events;
}

function randomGraph(random: () => number): ExtractedGraph {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const keys = ENTITY_KEYS.filter(() => random() < 0.5);
  const entities = keys.map((key) => ({ key, name: `${key[0].toUpperCase()}${key.slice(1)}${random() < 0.3 ? ' Jr' : ''}`, type: pick(TYPES) as ExtractedGraph['entities'][number]['type'] }));
  if (entities.length && random() < 0.2) entities.push({ ...entities[0], name: 'Duplicate key, later wins' });
  const mentions = Array.from({ length: Math.floor(random() * 8) }, () => ({ chunk: Math.floor(random() * 3), key: random() < 0.9 && keys.length ? pick(keys) : 'unknown-entity' }));
  const relations = Array.from({ length: Math.floor(random() * 6) }, () => ({
    chunk: Math.floor(random() * 2),
    source: pick(ENTITY_KEYS.slice(0, 3)),
    target: pick(ENTITY_KEYS.slice(2, 5)),
    predicate: pick(['co_occurs', 'mentioned']),
    context: `sentence ${Math.floor(random() * 4)}`,
  }));
  return { entities, mentions, relations };
}

/**
 * A random log for the webhook outbox: organizations registering, changing and deleting their webhook (and its
 * secret) between terminal and other statuses of their items, deliveries attempted and retried, databases created
 * and deleted, collections deleted, and redelivered events.
 */
function randomWebhookLog(random: () => number, n: number): RecordedEvent[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const events: RecordedEvent[] = [];
  const deliveries: string[] = [];
  let position = 0;
  const emit = (type: DomainEventType, data: any, orgId: string) => {
    position += 1;
    const e = {
      type,
      data,
      stream: 'x',
      revision: 0,
      position,
      metadata: { eventId: `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`, occurredAt: new Date(Date.UTC(2026, 0, 1) + position * 1000).toISOString(), orgId, actor: 'test' },
    } as RecordedEvent; // as above
    events.push(e);
    return e;
  };
  const orgOf = (db: string) => (db === DBS[0] ? 'org1' : 'org2');
  for (const db of DBS) emit('DatabaseCreated', { databaseId: db, name: `db-${db[0]}`, metadataSchema: [], embedder: { modelId: 'm', dimensions: 3 } }, orgOf(db));
  while (events.length < n) {
    const r = random();
    const org = pick(['org1', 'org2']);
    if (r < 0.5) {
      const db = pick(DBS);
      const status = pick([...STATUSES, 'success']);
      const e = emit('StatusAdvanced', { databaseId: db, itemKey: `k${Math.floor(random() * 20)}`, itemId: `doc-${Math.floor(random() * 20)}`, collection: pick(COLLECTIONS), store: 'memory', contentVersion: 0, status, ...(status === 'errored' ? { errorCode: 'PARSE_FAILED', message: 'bad "pdf"' } : {}) }, orgOf(db));
      deliveries.push(`dlv_${e.metadata.eventId}`);
    } else if (r < 0.58) {
      emit('WebhookRegistered', { url: `https://hooks.example/${Math.floor(random() * 3)}`, eventTypes: random() < 0.75 ? [INDEXING] : [], replaced: true }, org);
    } else if (r < 0.61) {
      emit('WebhookDeleted', {}, org);
    } else if (r < 0.65) {
      emit(random() < 0.7 ? 'SigningSecretSet' : 'SigningSecretRemoved', { secretId: '44444444-4444-4444-8444-444444444444', generated: random() < 0.5 }, org);
    } else if (r < 0.8 && deliveries.length) {
      const status = pick(['succeeded', 'failed', 'permanently_failed']);
      emit('DeliveryAttempted', { deliveryId: pick(deliveries), attempt: 1 + Math.floor(random() * 5), roundAttempt: 1, ok: status === 'succeeded', statusCode: status === 'succeeded' ? 200 : 500, errorCode: status === 'succeeded' ? null : 'http_500', errorMessage: null, durationMs: 5, status, nextAttemptAt: status === 'failed' ? '2026-02-01T00:00:00.000Z' : null }, org);
    } else if (r < 0.85 && deliveries.length) {
      emit('DeliveryRetryRequested', { deliveryId: pick(deliveries) }, org);
    } else if (r < 0.87) {
      const n = Math.floor(random() * 20);
      emit('ItemDeleted', { databaseId: pick(DBS), itemKey: `k${n}`, itemId: `doc-${n}`, collection: pick(COLLECTIONS), store: 'memory' }, org);
    } else if (r < 0.88) {
      emit('CollectionDeleted', { databaseId: pick(DBS), collection: 'temp' }, org);
    } else if (r < 0.89) {
      emit('DatabaseDeleted', { databaseId: DBS[1], name: 'beta' }, 'org2');
    } else if (r < 0.9) {
      emit('DatabaseCreated', { databaseId: DBS[1], name: 'beta-again', metadataSchema: [], embedder: { modelId: 'm', dimensions: 3 } }, 'org2');
    } else {
      events.push(events[Math.max(0, events.length - 1 - Math.floor(random() * 30))]);
    }
  }
  return events;
}
const INDEXING = 'indexing.status_changed';

describe('applyBatch gives the same read model as apply one event at a time', () => {
  let url: string;
  let dir: string;
  let blobs: BlobStore;
  beforeAll(async () => {
    url = await createTestDatabase('batcheq');
    dir = mkdtempSync(join(tmpdir(), 'crs-batcheq-'));
    blobs = new BlobStore(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

  it.each(SEEDS)('items, seed %i', async (seed) => {
    const random = seeded(seed);
    const events = await randomLog(random, blobs, 400);
    const rows = await expectBatchEquivalent(url, itemsProjection, events.filter((e) => itemsProjection.handles.includes(e.type)), random);
    expect(rows.rm_items.length).toBeGreaterThan(3); // the sequence leaves rows to compare
  });

  it.each(SEEDS)('items: rm_item_queue and rm_item_counts say what rm_items holds after every page, seed %i', async (seed) => {
    const random = seeded(seed);
    const events = (await randomLog(random, blobs, 400)).filter((e) => itemsProjection.handles.includes(e.type));
    const schema = `spec_${seed}_${Date.now().toString(36)}`;
    const ds = await openDataSource(url, { schema, poolSize: 1, name: 'crs-spec' });
    const rowsOf = async (q: string) => (await ds.query(`SELECT t::text AS r FROM (${q}) t ORDER BY 1`)).map((r: { r: string }) => r.r);
    const QUEUE = `SELECT database_id, item_key, CASE WHEN status = 'graph_creation' THEN 'graph' ELSE 'index' END AS stage, ingest_position, content_version
      FROM rm_items WHERE status IN ('queued', 'processing', 'graph_creation')`;
    const COUNTS = `SELECT database_id, collection, store, status, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS items, sum(chunk_count) AS chunks, sum(bytes) AS bytes
      FROM rm_items GROUP BY 1, 2, 3, 4, 5`;
    try {
      for (const ddl of itemsProjection.ddl) await ds.query(ddl);
      let checked = 0;
      for (let i = 0; i < events.length; ) {
        const n = 1 + Math.floor(random() * 40);
        const page = events.slice(i, i + n);
        i += n;
        // One event at a time (apply) or a page at once (applyBatch): the derived tables follow either way.
        if (random() < 0.3) for (const e of page) await itemsProjection.apply(e, ds);
        else await itemsProjection.applyBatch!(page, ds);
        expect(await rowsOf('SELECT * FROM rm_item_queue')).toEqual(await rowsOf(QUEUE));
        expect(await rowsOf('SELECT * FROM rm_item_counts')).toEqual(await rowsOf(COUNTS));
        checked += 1;
      }
      expect(checked).toBeGreaterThan(5);
      expect((await rowsOf('SELECT * FROM rm_item_counts')).length).toBeGreaterThan(1);
      // A rebuild replays with the triggers standing aside and derives both tables once at the end (afterReplay).
      const log = [...new Map(events.map((e) => [e.position, e])).values()]; // a live runner's checkpoint skips redeliveries
      const store = {
        readAll: async ({ after = 0, maxCount = Infinity }: { after?: number; maxCount?: number } = {}) => log.filter((e) => e.position > after).slice(0, maxCount),
        headPosition: async () => log[log.length - 1].position,
      } as unknown as EventStore;
      const runner = new ProjectionRunner(ds, store, [itemsProjection], { info: () => undefined, error: () => undefined });
      await runner.migrate();
      await runner.rebuild('items');
      const rebuiltQueue = await rowsOf('SELECT * FROM rm_item_queue');
      expect(rebuiltQueue.length).toBeGreaterThan(0); // the sequence leaves work queued, so the queue is compared too
      expect(rebuiltQueue).toEqual(await rowsOf(QUEUE));
      expect(await rowsOf('SELECT * FROM rm_item_counts')).toEqual(await rowsOf(COUNTS));
      // Live again after the replay: the triggers keep the tables (the replay's setting ended with its transaction).
      await ds.query(`UPDATE rm_items SET status = 'completed' WHERE status IN ('queued', 'processing', 'graph_creation')`);
      expect(await rowsOf('SELECT * FROM rm_item_queue')).toEqual([]);
      expect(await rowsOf('SELECT * FROM rm_item_counts')).toEqual(await rowsOf(COUNTS));
      // A rebuild empties rm_items first: the triggers leave nothing behind in the derived tables.
      await ds.query('DELETE FROM rm_items');
      expect(await rowsOf('SELECT * FROM rm_item_queue')).toEqual([]);
      expect(await rowsOf('SELECT * FROM rm_item_counts')).toEqual([]);
    } finally {
      await ds.query(`DROP SCHEMA ${schema} CASCADE`);
      await ds.destroy();
    }
  });

  it.each(SEEDS)('graph, seed %i', async (seed) => {
    const random = seeded(seed);
    const events = await randomLog(random, blobs, 400);
    const graph = graphProjection(blobs);
    const rows = await expectBatchEquivalent(url, graph, events.filter((e) => graph.handles.includes(e.type)), random);
    expect(rows.rm_graph_mentions.length).toBeGreaterThan(3);
    expect(rows.rm_graph_relations.length).toBeGreaterThan(0);
    expect(rows.rm_graph_entities.length).toBeGreaterThan(1);
  });

  it.each(SEEDS)('blob references, seed %i', async (seed) => {
    const random = seeded(seed);
    const events = await randomLog(random, blobs, 400);
    const rows = await expectBatchEquivalent(url, blobRefsProjection, events.filter((e) => blobRefsProjection.handles.includes(e.type)), random);
    expect(rows.rm_blob_refs.length).toBeGreaterThan(3);
    expect(new Set(rows.rm_blob_refs.map((r) => r.split(',')[1])).size).toBeGreaterThan(2); // contents, chunk lists and graphs
    expect(rows.rm_blob_ref_items.length).toBeGreaterThan(3);
  });

  it.each(SEEDS)('queries, seed %i', async (seed) => {
    const random = seeded(seed);
    const events = await randomLog(random, blobs, 400);
    const queries = events.filter((e) => queriesProjection.handles.includes(e.type));
    const rows = await expectBatchEquivalent(url, queriesProjection, queries, random);
    expect(rows.rm_queries.length).toBeGreaterThan(3);
    expect(rows.rm_queries.some((r) => r.includes('{default,temp}'))).toBe(true); // scopes are kept (what a collection's deletion reads)
  });

  it.each(SEEDS)('webhook outbox, seed %i', async (seed) => {
    const random = seeded(seed);
    const events = randomWebhookLog(random, 400);
    const rows = await expectBatchEquivalent(url, webhookOutboxProjection, events.filter((e) => webhookOutboxProjection.handles.includes(e.type)), random);
    expect(rows.rm_webhook_deliveries.length).toBeGreaterThan(3);
    expect(rows.rm_webhook_deliveries.some((r) => !r.includes(',pending,'))).toBe(true); // attempts were applied too
  });

  it('the generated logs exercise every rule: stale versions, deletions, re-ingests, duplicates, missing blobs', async () => {
    const random = seeded(99);
    const events = await randomLog(random, blobs, 1500);
    const types = new Set(events.map((e) => e.type));
    for (const t of ['ItemIngested', 'StatusAdvanced', 'ItemChunked', 'GraphExtracted', 'ItemMetadataUpdated', 'AclChanged', 'ItemDeleted', 'QueryRecorded', 'CollectionDeleted', 'DatabaseDeleted']) expect(types).toContain(t);
    expect(new Set(events).size).toBeLessThan(events.length); // some events delivered twice
    expect(events.some((e) => e.type === 'GraphExtracted' && e.data.graphSha256 === 'f'.repeat(64))).toBe(true);
    expect(events.some((e) => e.type === 'ItemIngested' && e.revision === 0 && events.some((o) => o.position < e.position && o.type === 'ItemDeleted' && o.data.itemKey === e.data.itemKey && o.data.databaseId === e.data.databaseId))).toBe(true);
  });
});
