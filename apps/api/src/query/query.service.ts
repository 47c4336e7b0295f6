import { Inject, Injectable } from '@nestjs/common';
import { callerPrincipals } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { streams } from '@crs/domain/streams';
import { metadataFor, type CommandContext } from '@crs/eventstore/command-handling';
import { isIndexedMetadataKey, METADATA_KEY_RULE } from '@crs/search/metadata-filter-tokens';
import type { Scalar, Store } from '@crs/search/search-index.port';
import type { DatabaseRecord } from '../databases/database-directory';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import type { Embedder } from '@crs/embeddings';
import type { StepClock } from '@crs/domain/step-clock';
import { EMBEDDER, EVENT_STORE, PROJECTION_RUNNER, QUERY_STEP_CLOCK } from '@crs/platform/tokens';
import { MAX_RESULTS_DEFAULT, type QueryRequest } from './query.request.dto';
import { RetrievalService, type RankedChunk } from './retrieval.service';
import { ThinkingService } from './thinking.service';
import { GraphContextService } from './graph-context.service';

/**
 * alpha "auto" (and omitted): the best fast-mode SciFact nDCG@10 on the BEIR train split (809 queries; GloVe-SIF,
 * alphas 0 to 0.7), chosen there and not on the test split the target is reported on:
 * bench/results/quality-train-sweep.md.
 */
export const AUTO_ALPHA = 0.15;

export interface QueryOptions {
  collections?: string[];
}

/** Turns a /query request into a retrieval, shapes the chunks as the original SDK expects, and records the query. */
@Injectable()
export class QueryService {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(QUERY_STEP_CLOCK) private readonly queryClock: StepClock,
    private readonly retrieval: RetrievalService,
    private readonly thinking: ThinkingService,
    private readonly graph: GraphContextService,
  ) {}

  async run(ctx: CommandContext, db: DatabaseRecord, body: QueryRequest, collections: string[] | undefined) {
    const started = Date.now();
    const clock = this.queryClock;
    const clockStarted = process.hrtime.bigint();
    if (body.operator && body.query_by !== 'text') throw invalid('operator is only allowed with query_by "text"');
    // A database whose embedder is not this service's (a configuration change before `crs databases reembed`)
    // is ranked by keywords only: vectors of two models are never compared.
    const sameVectorSpace = db.embedder.modelId === this.embedder.modelId;
    const alpha = body.query_by === 'text' || !sameVectorSpace ? 0 : resolveAlpha(body.alpha);
    const type = body.type ?? 'all';
    const stores: Store[] = type === 'all' ? ['knowledge', 'memory'] : [type];
    const caller = callerPrincipals(body.acl);
    const { metadata, additionalMetadata } = splitFilters(db, body.metadata_filters);
    const limit = body.max_results ?? MAX_RESULTS_DEFAULT;
    const request = {
      databaseId: db.id,
      collections,
      stores,
      query: body.query,
      vectorText: body.additional_context ? `${body.query}\n${body.additional_context}` : body.query,
      limit,
      alpha,
      operator: body.operator,
      caller,
      includeApps: body.query_apps ?? true,
      metadata,
      additionalMetadata,
      recencyBias: body.recency_bias ?? 0,
    };
    const mode = body.mode ?? 'fast';
    const wantGraph = body.graph_context !== false;
    let ranked: RankedChunk[];
    let queryKeys: string[];
    if (mode === 'thinking') ({ ranked, queryKeys } = await clock.timed('thinking.retrieve', 1, () => this.thinking.retrieve(request)));
    else {
      // The query's graph entities depend on the text alone: looked up while the engine searches.
      const entities = wantGraph ? clock.timed('graph.query_entities', 1, () => this.graph.queryEntities(db.id, body.query)) : Promise.resolve([]);
      entities.catch(() => undefined); // awaited below; not unhandled if retrieval fails first
      ranked = await clock.timed('retrieve', 1, () => this.retrieval.retrieve(request));
      queryKeys = await entities;
    }
    const chunks = ranked.map(toChunk);
    // Forceful relations: thinking mode only (query_forceful_relations defaults to true there); ignored in fast mode.
    const additional: Record<string, ReturnType<typeof toChunk>> = {};
    const disclosed: { chunkId: string; itemId: string; linkedFrom: string }[] = [];
    if (mode === 'thinking' && body.query_forceful_relations !== false) {
      const linked = await clock.timed('thinking.forceful_relations', 1, () => this.thinking.linked(request, ranked));
      for (const [i, r] of ranked.entries()) {
        for (const l of linked.get(r.candidate.chunkId) ?? []) {
          additional[l.candidate.chunkId] = toChunk(l);
          chunks[i].extra_context_ids.push(l.candidate.chunkId);
          disclosed.push({ chunkId: l.candidate.chunkId, itemId: l.item.item_id, linkedFrom: r.candidate.chunkId });
        }
      }
    }
    // The QueryRecorded append and the graph context are independent: both in flight at once. latencyMs is the
    // retrieval's (search, read-model check, ranking, forceful relations), taken before either starts.
    const recorded = clock.timed('record', 1, () => this.record(ctx, db, body, collections, type, caller, ranked, disclosed, Date.now() - started));
    recorded.catch(() => undefined); // awaited below
    const graphContext = wantGraph
      ? await clock.timed('graph.context', 1, () => this.graph.context(db.id, ranked, queryKeys))
      : { query_paths: [], chunk_relations: [], chunk_id_to_group_ids: {}, synthesis_context: null };
    await recorded;
    clock.add(`total.${mode}`, 1, clockStarted);
    const data = {
      chunks,
      sources: sourcesOf(ranked),
      graph_context: graphContext,
      additional_context: additional,
      vectorstore_status: { knowledge: stores.includes('knowledge'), memories: stores.includes('memory') },
    };
    return data;
  }

  private async record(
    ctx: CommandContext,
    db: DatabaseRecord,
    body: QueryRequest,
    collections: string[] | undefined,
    type: 'memory' | 'knowledge' | 'all',
    caller: string[] | null,
    ranked: RankedChunk[],
    disclosed: { chunkId: string; itemId: string; linkedFrom: string }[],
    latencyMs: number,
  ) {
    const requestId = ctx.requestId!;
    const position = this.runner.position('items');
    await this.store.append(
      streams.query(db.id, requestId),
      [{
        type: 'QueryRecorded',
        data: {
          requestId, databaseId: db.id, collections: collections ?? null, query: body.query, type, mode: body.mode ?? 'fast', acl: caller,
          results: ranked.map((r) => ({ chunkId: r.candidate.chunkId, itemId: r.item.item_id, score: round(r.score) })),
          ...(disclosed.length ? { additionalContext: disclosed } : {}),
          logPosition: position, latencyMs,
        },
        metadata: metadataFor({ ...ctx, databaseId: db.id }),
      }],
      { expectedRevision: 'no_stream' },
    );
  }
}

export function resolveAlpha(alpha: unknown): number {
  if (alpha === undefined || alpha === null || alpha === 'auto') return AUTO_ALPHA;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha < 0 || alpha > 1) throw invalid('alpha must be a number from 0 to 1 or "auto"');
  return alpha;
}

/** Which collections a query searches: `collections` (or legacy `sub_tenant_ids`), else `collection`, else the default one. */
export function queryCollections(body: { collections?: string[]; sub_tenant_ids?: string[] }, collection: string | undefined): string[] {
  const many = body.collections ?? body.sub_tenant_ids;
  if (many && collection) throw invalid('send collection or collections, not both');
  if (many) {
    if (many.length === 0 || many.length > 100) throw invalid('collections must list 1 to 100 collections');
    return [...new Set(many.map((c) => assertCollectionName(c, 'collections[]')))];
  }
  return [collection ? assertCollectionName(collection) : DEFAULT_COLLECTION];
}

/**
 * Bounds of one query's metadata filters: every condition becomes engine work on every search (the filter is pushed
 * down into each call): unbounded, 20,000 conditions took 14 s of CPU in one request, and 50,000 crashed the engine.
 */
export const FILTER_LIMITS = { conditions: 100, valuesPerCondition: 1000 };

/** metadata_filters: schema attributes at the top level, free-form fields under additional_metadata (legacy: document_metadata). */
export function splitFilters(db: DatabaseRecord, filters: Record<string, unknown> | undefined) {
  if (!filters) return {};
  const conditions = Object.entries(filters).reduce(
    (n, [k, v]) => n + (['additional_metadata', 'document_metadata', 'tenant_metadata'].includes(k) && v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : 1),
    0,
  );
  if (conditions > FILTER_LIMITS.conditions) throw invalid(`metadata_filters has ${conditions} conditions, more than ${FILTER_LIMITS.conditions}`);
  // Without a prototype: a filter key may be any string, "__proto__" included.
  const metadata: Record<string, Scalar | Scalar[]> = Object.create(null);
  let additionalMetadata: Record<string, Scalar | Scalar[]> | undefined;
  const schema = new Set(db.metadataSchema.map((f) => f.name));
  for (const [key, value] of Object.entries(filters)) {
    if (key === 'additional_metadata' || key === 'document_metadata' || key === 'tenant_metadata') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`metadata_filters.${key} must be an object`);
      const target = key === 'tenant_metadata' ? metadata : (additionalMetadata ??= Object.create(null) as Record<string, Scalar | Scalar[]>);
      for (const [k, v] of Object.entries(value)) {
        if (key === 'tenant_metadata' && !schema.has(k)) throw invalid(`metadata_filters.tenant_metadata.${k} is not in the database metadata schema`);
        addCondition(target, k, filterValue(v, `metadata_filters.${key}.${k}`), `metadata_filters.${key}`);
      }
      continue;
    }
    if (!schema.has(key)) throw invalid(`metadata_filters.${key} is not in the database metadata schema (free-form fields go under metadata_filters.additional_metadata)`);
    addCondition(metadata, key, filterValue(value, `metadata_filters.${key}`), 'metadata_filters');
  }
  return { metadata: Object.keys(metadata).length ? metadata : undefined, additionalMetadata };
}

/**
 * A condition on a key: a key given twice (a schema attribute at the top level and under tenant_metadata;
 * additional_metadata and its legacy name document_metadata) must satisfy both, so its values are intersected (a
 * chunk holds one value per key; values compare by type). The second never replaces the first.
 */
function addCondition(target: Record<string, Scalar | Scalar[]>, key: string, value: Scalar | Scalar[], where: string): void {
  if (!isIndexedMetadataKey(key)) throw invalid(`${where}: ${JSON.stringify(key.slice(0, 100))} cannot be filtered on (filter keys: ${METADATA_KEY_RULE}; items may hold other keys, stored and returned but not filterable)`);
  if (!Object.prototype.hasOwnProperty.call(target, key)) {
    target[key] = value;
    return;
  }
  const list = (x: Scalar | Scalar[]) => (Array.isArray(x) ? x : [x]);
  const earlier = new Set(list(target[key]).map((x) => JSON.stringify(x)));
  target[key] = list(value).filter((x) => earlier.has(JSON.stringify(x)));
}

function filterValue(v: unknown, field: string): Scalar | Scalar[] {
  const scalar = (x: unknown) => x === null || ['string', 'number', 'boolean'].includes(typeof x);
  if (Array.isArray(v)) {
    if (!v.length || !v.every(scalar)) throw invalid(`${field} must be a value or a non-empty list of values`);
    if (v.length > FILTER_LIMITS.valuesPerCondition) throw invalid(`${field} lists ${v.length} values, more than ${FILTER_LIMITS.valuesPerCondition}`);
    return v as Scalar[];
  }
  if (!scalar(v)) throw invalid(`${field} must be a string, number, boolean, null or a list of them`);
  return v as Scalar;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The chunk shape of the original SDK (`chunk_uuid`, `id` = source id, `chunk_content`, ...) plus our store and collection. */
export function toChunk(r: RankedChunk) {
  const { item, candidate } = r;
  return {
    chunk_uuid: candidate.chunkId,
    id: item.item_id,
    chunk_content: candidate.doc.text,
    source_type: item.source_type,
    source_title: item.title,
    source_upload_time: iso(item.created_at),
    source_last_updated_time: iso(item.updated_at),
    layout: null,
    relevancy_score: round(r.score),
    metadata: item.metadata,
    additional_metadata: item.additional_metadata,
    extra_context_ids: [] as string[],
    store: item.store,
    type: item.store,
    collection: item.collection,
    scores: { keyword: round(r.keyword), vector: round(r.vector) },
  };
}

export function sourcesOf(ranked: RankedChunk[]) {
  const seen = new Map<string, ReturnType<typeof source>>();
  for (const r of ranked) if (!seen.has(r.item.item_key)) seen.set(r.item.item_key, source(r));
  return [...seen.values()];
}

function source(r: RankedChunk) {
  const i = r.item;
  const add = i.additional_metadata ?? {};
  return {
    id: i.item_id,
    title: i.title,
    type: i.source_type,
    description: null,
    url: typeof add.url === 'string' ? add.url : null,
    timestamp: iso(i.updated_at),
    metadata: i.metadata,
    additional_metadata: add,
    app_kind: i.app_kind,
    app_provider: i.app_provider,
    app_external_id: i.kind === 'app' ? i.item_id : null,
    collection: i.collection,
    store: i.store,
  };
}
