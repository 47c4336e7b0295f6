import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { callerPrincipals } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import { resolveAlpha } from '@crs/domain/retrieval/alpha';
import type { StepClock } from '@crs/domain/step-clock';
import { streams } from '@crs/domain/streams';
import type { Embedder } from '@crs/embeddings';
import { metadataFor, type CommandContext } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { EMBEDDER, EVENT_STORE, PROJECTION_RUNNER, QUERY_STEP_CLOCK } from '@crs/platform/tokens';
import type { Store } from '@crs/search/search-index.port';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory, type DatabaseRecord } from '../../databases/database-directory';
import { RetrievalService, type RankedChunk } from '../retrieval.service';
import { ThinkingService } from '../thinking.service';
import { GraphContextService } from '../graph-context.service';
import { splitFilters } from './metadata-filters';
import { round, sourcesOf, toChunk } from './query-answer';
import { MAX_RESULTS_DEFAULT, type QueryRequest } from './run-query.request.dto';

export interface QueryAnswer {
  chunks: ReturnType<typeof toChunk>[];
  sources: ReturnType<typeof sourcesOf>;
  graph_context: unknown;
  additional_context: Record<string, ReturnType<typeof toChunk>>;
  vectorstore_status: { knowledge: boolean; memories: boolean };
}

/** Retrieve the context most relevant to a request from the given collections of one database. */
export class RunQuery extends Query<QueryAnswer> {
  constructor(readonly caller: Caller, readonly database: string, readonly collections: string[], readonly request: QueryRequest) {
    super();
  }
}

/**
 * Turns a request into a retrieval (fast or thinking mode), shapes the chunks as the original SDK expects, and records
 * what was asked and what was disclosed (QueryRecorded, which feedback links to and auditors replay): the one append a
 * query makes.
 */
@QueryHandler(RunQuery)
export class RunQueryHandler implements IQueryHandler<RunQuery> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(QUERY_STEP_CLOCK) private readonly queryClock: StepClock,
    private readonly directory: DatabaseDirectory,
    private readonly retrieval: RetrievalService,
    private readonly thinking: ThinkingService,
    private readonly graph: GraphContextService,
  ) {}

  async execute({ caller, database, collections, request: body }: RunQuery): Promise<QueryAnswer> {
    const db = await this.directory.resolve(caller.key, database);
    const ctx = caller.ctx;
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
    const principals = callerPrincipals(body.acl);
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
      caller: principals,
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
    const recorded = clock.timed('record', 1, () => this.record(ctx, db, body, collections, type, principals, ranked, disclosed, Date.now() - started));
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

