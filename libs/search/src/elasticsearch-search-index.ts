import { Client, type ClientOptions, errors, type estypes } from '@elastic/elasticsearch';
import { assertValidIndexName } from './index-name';
import { chunkFilterTokens, filterTokenGroups } from './metadata-filter-tokens';
import {
  type Candidate,
  type ChunkDoc,
  type ChunkVector,
  type KeywordSearchOptions,
  type LeanCandidate,
  type LeanDoc,
  type LeanListChunksOptions,
  type ListChunksOptions,
  PUBLIC_PRINCIPAL,
  type Scalar,
  type SearchFilter,
  type SearchIndex,
  type SearchOptions,
  assertDocIds,
  SearchIndexError,
  type Store,
} from './search-index.port';

interface ElasticsearchCommonOptions {
  /**
   * How writes become visible to search. 'wait_for' (default): the write returns once a refresh made it
   * searchable (up to the index refresh interval, 1 s by default). true: refresh at once (costly under load).
   */
  refresh?: 'wait_for' | true;
  numberOfShards?: number;
  numberOfReplicas?: number;
}

export type ElasticsearchSearchIndexOptions =
  | ({ node: string; auth?: ClientOptions['auth'] } & ElasticsearchCommonOptions)
  | ({ client: Client } & ElasticsearchCommonOptions);

/** Documents per bulk request. */
const BULK_SLICE = 500;
/** Ids per terms query in deletes. */
const ID_BATCH = 1000;
/** (item, version) clauses per delete-by-query. */
const VERSION_BATCH = 200;
/** Elasticsearch's default index.max_result_window: deeper pages go through search_after. */
const MAX_WINDOW = 10_000;
const PAGE = 1000;
/** Never returned by search hits: the indexed vector and its exact float32 copy. */
const VECTOR_FIELDS = ['vector', 'vector_f32'];
/** The _source fields of a LeanDoc. */
const LEAN_FIELDS = ['chunk_id', 'item_id', 'text', 'version'];

/** What is stored per chunk (the _source). */
interface ChunkSource {
  chunk_id: string;
  item_id: string;
  store: Store;
  collection: string;
  title: string | null;
  text: string;
  vector?: number[];
  /** Base64 of the little-endian float32 vector: exact round-trip, whatever the server does with dense_vector in _source. */
  vector_f32?: string;
  principals: string[] | null;
  /** Separate from principals, because Elasticsearch cannot tell an empty list from a missing field. */
  acl_restricted: boolean;
  metadata: Record<string, Scalar>;
  additional_metadata: Record<string, Scalar>;
  filter_kv: string[];
  source_type: string | null;
  is_app: boolean;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  version: number;
}

/**
 * The production engine: one Elasticsearch index per physical index, BM25 on an English-analysed copy of
 * title + text, cosine HNSW kNN with prefilters, and external versioning so an older event never
 * overwrites a newer one.
 *
 * Each physical index is a concrete index `<name>-crs` behind an alias `<name>`. Writes use `require_alias`,
 * so a write to a dropped index fails instead of auto-creating an index with a guessed mapping.
 */
export class ElasticsearchSearchIndex implements SearchIndex {
  readonly engine = 'elasticsearch' as const;

  private readonly client: Client;
  private readonly ownsClient: boolean;
  private readonly refresh: 'wait_for' | true;

  constructor(private readonly options: ElasticsearchSearchIndexOptions) {
    if ('client' in options) {
      this.client = options.client;
      this.ownsClient = false;
    } else {
      this.client = new Client({ node: options.node, auth: options.auth });
      this.ownsClient = true;
    }
    this.refresh = options.refresh ?? 'wait_for';
  }

  async createIndex(indexName: string, opts: { dimensions: number }): Promise<void> {
    assertValidIndexName(indexName);
    if (!Number.isSafeInteger(opts.dimensions) || opts.dimensions <= 0) {
      throw new SearchIndexError('invalid_argument', `dimensions must be a positive integer, got ${opts.dimensions}`);
    }
    if (!(await this.indexExists(indexName))) {
      try {
        await this.client.indices.create({
          index: concreteName(indexName),
          aliases: { [indexName]: {} },
          settings: {
            number_of_shards: this.options.numberOfShards ?? 1,
            ...(this.options.numberOfReplicas === undefined ? {} : { number_of_replicas: this.options.numberOfReplicas }),
          },
          mappings: chunkMapping(opts.dimensions),
        });
        return;
      } catch (error) {
        if (!isErrorType(error, 'resource_already_exists_exception')) throw error;
      }
    }
    const existing = await this.dimensionsOf(indexName);
    if (existing !== opts.dimensions) {
      throw new SearchIndexError(
        'dimension_mismatch',
        `search index ${indexName} exists with ${existing} dimensions, not ${opts.dimensions}`,
      );
    }
  }

  async dropIndex(indexName: string): Promise<void> {
    assertValidIndexName(indexName);
    await this.client.indices.delete({ index: concreteName(indexName), ignore_unavailable: true });
  }

  async indexExists(indexName: string): Promise<boolean> {
    assertValidIndexName(indexName);
    return this.client.indices.exists({ index: indexName });
  }

  async upsert(indexName: string, docs: ChunkDoc[]): Promise<void> {
    assertValidIndexName(indexName);
    assertDocIds(docs);
    for (let start = 0; start < docs.length; start += BULK_SLICE) {
      const operations = docs.slice(start, start + BULK_SLICE).flatMap((doc) => [
        // external_gte: an equal version (redelivered event) replaces, a lower one is rejected with a conflict.
        { index: { _id: doc.chunkId, version: integer(doc.version, 'version'), version_type: 'external_gte' as const } },
        toSource(doc),
      ]);
      const response = await this.call(indexName, () =>
        this.client.bulk({ index: indexName, require_alias: true, refresh: this.refresh, operations }),
      );
      if (!response.errors) continue;
      const failures = response.items
        .map((item) => item.index)
        .filter((item) => item?.error && item.error.type !== 'version_conflict_engine_exception');
      if (failures.length === 0) continue;
      if (failures.some((f) => f?.error?.type === 'index_not_found_exception' || f?.status === 404)) {
        throw notFound(indexName);
      }
      const first = failures[0]?.error;
      throw new Error(`bulk upsert into ${indexName}: ${failures.length} failed, first: ${first?.type}: ${first?.reason}`);
    }
  }

  async deleteItems(indexName: string, itemIds: string[], version: number): Promise<void> {
    assertValidIndexName(indexName);
    const maxVersion = integer(version, 'version');
    for (let start = 0; start < itemIds.length; start += ID_BATCH) {
      await this.deleteByQuery(indexName, [
        { terms: { item_id: itemIds.slice(start, start + ID_BATCH) } },
        { range: { version: { lte: maxVersion } } },
      ]);
    }
  }

  async deleteItemVersions(indexName: string, items: { itemId: string; version: number }[]): Promise<void> {
    assertValidIndexName(indexName);
    for (let start = 0; start < items.length; start += VERSION_BATCH) {
      const should = items.slice(start, start + VERSION_BATCH).map((i) => ({
        bool: { filter: [{ term: { item_id: i.itemId } }, { range: { version: { lte: integer(i.version, 'version') } } }] },
      }));
      await this.deleteByQuery(indexName, [{ bool: { should, minimum_should_match: 1 } }]);
    }
  }

  async deleteWhere(indexName: string, filter: Pick<SearchFilter, 'collections' | 'itemIds'>): Promise<void> {
    assertValidIndexName(indexName);
    if (filter.collections === undefined && filter.itemIds === undefined) {
      throw new SearchIndexError('invalid_argument', 'deleteWhere needs collections or itemIds (use dropIndex to empty an index)');
    }
    if (filter.collections?.length === 0 || filter.itemIds?.length === 0) return;
    await this.deleteByQuery(indexName, esFilters({ collections: filter.collections, itemIds: filter.itemIds }));
  }

  keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions & { fields: 'lean' }): Promise<LeanCandidate[]>;
  keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions & { fields?: 'full' }): Promise<Candidate[]>;
  async keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions): Promise<LeanCandidate[] | Candidate[]> {
    if (opts.fields === 'lean') {
      const hits = await this.keywordHits(indexName, query, opts, { includes: LEAN_FIELDS });
      return hits.map((hit) => toLeanCandidate(hit, hit._score ?? 0));
    }
    const hits = await this.keywordHits(indexName, query, opts, { excludes: VECTOR_FIELDS });
    return hits.map((hit) => toCandidate(hit, hit._score ?? 0));
  }

  vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions & { fields: 'lean' }): Promise<LeanCandidate[]>;
  vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions & { fields?: 'full' }): Promise<Candidate[]>;
  async vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions): Promise<LeanCandidate[] | Candidate[]> {
    // Elasticsearch scores cosine as (1 + cos) / 2; report the cosine itself, like the embedded engine.
    const cosine = (hit: estypes.SearchHit<ChunkSource>) => 2 * (hit._score ?? 0) - 1;
    if (opts.fields === 'lean') {
      const hits = await this.vectorHits(indexName, vector, opts, { includes: LEAN_FIELDS });
      return hits.map((hit) => toLeanCandidate(hit, cosine(hit)));
    }
    const hits = await this.vectorHits(indexName, vector, opts, { excludes: VECTOR_FIELDS });
    return hits.map((hit) => toCandidate(hit, cosine(hit)));
  }

  private async keywordHits(
    indexName: string,
    query: string,
    opts: KeywordSearchOptions,
    source: estypes.SearchSourceFilter,
  ): Promise<estypes.SearchHit<ChunkSource>[]> {
    assertValidIndexName(indexName);
    const text = query.trim();
    if (text === '' || opts.limit <= 0) return [];
    const operator = opts.operator ?? 'or';
    const match: estypes.QueryDslQueryContainer =
      operator === 'phrase'
        ? { match_phrase: { search_text: { query: text } } }
        : { match: { search_text: { query: text, operator } } };
    const response = await this.call(indexName, () =>
      this.client.search<ChunkSource>({
        index: indexName,
        size: Math.min(opts.limit, MAX_WINDOW),
        track_total_hits: false,
        query: { bool: { must: [match], filter: esFilters(opts.filter) } },
        _source: source,
      }),
    );
    return response.hits.hits;
  }

  private async vectorHits(
    indexName: string,
    vector: Float32Array | number[],
    opts: SearchOptions,
    source: estypes.SearchSourceFilter,
  ): Promise<estypes.SearchHit<ChunkSource>[]> {
    assertValidIndexName(indexName);
    if (opts.limit <= 0) return [];
    const k = Math.min(opts.limit, MAX_WINDOW);
    const response = await this.call(indexName, () =>
      this.client.search<ChunkSource>({
        index: indexName,
        size: k,
        track_total_hits: false,
        knn: {
          field: 'vector',
          query_vector: Array.from(vector),
          k,
          num_candidates: Math.min(MAX_WINDOW, Math.max(100, k * 10)),
          filter: esFilters(opts.filter), // applied during the HNSW search, not after it
        },
        _source: source,
      }),
    );
    return response.hits.hits;
  }

  async getChunks(indexName: string, chunkIds: string[]): Promise<ChunkDoc[]> {
    assertValidIndexName(indexName);
    if (chunkIds.length === 0) return [];
    const ids = [...new Set(chunkIds)];
    const response = await this.call(indexName, () =>
      this.client.mget<ChunkSource>({ index: indexName, ids, _source_excludes: ['vector'] }),
    );
    const found = new Map<string, ChunkDoc>();
    for (const entry of response.docs) {
      if ('found' in entry && entry.found && entry._source) found.set(entry._id, toChunkDoc(entry._source));
    }
    return chunkIds.flatMap((id) => {
      const doc = found.get(id);
      return doc ? [doc] : [];
    });
  }

  async getVectors(indexName: string, chunkIds: string[]): Promise<ChunkVector[]> {
    assertValidIndexName(indexName);
    if (chunkIds.length === 0) return [];
    const ids = [...new Set(chunkIds)];
    const response = await this.call(indexName, () =>
      this.client.mget<Pick<ChunkSource, 'vector' | 'vector_f32'>>({ index: indexName, ids, _source_includes: ['vector_f32', 'vector'] }),
    );
    const found = new Map<string, Float32Array>();
    for (const entry of response.docs) {
      if ('found' in entry && entry.found && entry._source) found.set(entry._id, sourceVector(entry._source));
    }
    return chunkIds.flatMap((chunkId) => {
      const vector = found.get(chunkId);
      return vector ? [{ chunkId, vector }] : [];
    });
  }

  listChunks(indexName: string, opts: LeanListChunksOptions): Promise<LeanDoc[]>;
  listChunks(indexName: string, opts?: ListChunksOptions): Promise<ChunkDoc[]>;
  async listChunks(indexName: string, opts: ListChunksOptions | LeanListChunksOptions = {}): Promise<LeanDoc[] | ChunkDoc[]> {
    if (opts.fields === 'lean') {
      const hits = await this.listHits(indexName, opts, { includes: LEAN_FIELDS });
      return hits.map((hit) => toLeanCandidate(hit, 0).doc);
    }
    const hits = await this.listHits(indexName, opts, { excludes: ['vector'] });
    return hits.flatMap((hit) => (hit._source ? [toChunkDoc(hit._source)] : []));
  }

  /** The hits of a filter, in chunk_id order (the order is also what pages deep results with search_after). */
  private async listHits(
    indexName: string,
    opts: { filter?: SearchFilter; limit?: number; offset?: number },
    source: estypes.SearchSourceFilter,
  ): Promise<estypes.SearchHit<ChunkSource>[]> {
    assertValidIndexName(indexName);
    const offset = opts.offset ?? 0;
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return [];
    const query: estypes.QueryDslQueryContainer = { bool: { filter: esFilters(opts.filter) } };
    const sort: estypes.Sort = [{ chunk_id: 'asc' }];
    if (offset + limit <= MAX_WINDOW) {
      const response = await this.call(indexName, () =>
        this.client.search<ChunkSource>({ index: indexName, from: offset, size: limit, sort, query, track_total_hits: false, _source: source }),
      );
      return response.hits.hits;
    }
    // Deep pages: walk the chunk_id order with search_after, skipping `offset` chunks.
    const out: estypes.SearchHit<ChunkSource>[] = [];
    let skip = offset;
    let after: estypes.SortResults | undefined;
    while (out.length < limit) {
      const response = await this.call(indexName, () =>
        this.client.search<ChunkSource>({ index: indexName, size: PAGE, sort, query, track_total_hits: false, _source: source, ...(after ? { search_after: after } : {}) }),
      );
      const hits = response.hits.hits;
      for (const hit of hits) {
        if (skip > 0) skip--;
        else if (out.length < limit && hit._source) out.push(hit);
      }
      if (hits.length < PAGE) break;
      after = hits[hits.length - 1].sort;
    }
    return out;
  }

  async count(indexName: string, filter?: SearchFilter): Promise<number> {
    assertValidIndexName(indexName);
    const response = await this.call(indexName, () =>
      this.client.count({ index: indexName, query: { bool: { filter: esFilters(filter) } } }),
    );
    return response.count;
  }

  /** Segment merging is Elasticsearch's own business; this makes every write searchable now. */
  async optimize(indexName: string): Promise<void> {
    assertValidIndexName(indexName);
    await this.call(indexName, () => this.client.indices.refresh({ index: indexName }));
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }

  private async deleteByQuery(indexName: string, filter: estypes.QueryDslQueryContainer[]): Promise<void> {
    try {
      await this.client.deleteByQuery({
        index: indexName,
        query: { bool: { filter } },
        // A chunk rewritten since the snapshot has a newer version: keep it.
        conflicts: 'proceed',
        refresh: true,
      });
    } catch (error) {
      if (isErrorType(error, 'index_not_found_exception')) return; // deleting from a missing index: nothing to do
      throw error;
    }
  }

  private async dimensionsOf(indexName: string): Promise<number> {
    const mappings = await this.call(indexName, () => this.client.indices.getMapping({ index: indexName }));
    for (const entry of Object.values(mappings)) {
      const vector = entry.mappings.properties?.vector as estypes.MappingDenseVectorProperty | undefined;
      if (vector?.dims !== undefined) return vector.dims;
    }
    throw new Error(`search index ${indexName} has no vector mapping`);
  }

  private async call<T>(indexName: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (isErrorType(error, 'index_not_found_exception')) throw notFound(indexName);
      throw error;
    }
  }
}

function concreteName(indexName: string): string {
  // '-' never appears in a valid index name, so a concrete index can never collide with another alias.
  return `${indexName}-crs`;
}

function chunkMapping(dimensions: number): estypes.MappingTypeMapping {
  const keyword = { type: 'keyword' } as const;
  const english = { type: 'text', analyzer: 'english' } as const;
  return {
    dynamic: 'strict',
    properties: {
      chunk_id: keyword,
      item_id: keyword,
      store: keyword,
      collection: keyword,
      title: { ...english, copy_to: ['search_text'] },
      text: { ...english, copy_to: ['search_text'] },
      // Title and text together, so `and` and `phrase` apply to the chunk as a whole (as in the embedded engine).
      search_text: english,
      vector: { type: 'dense_vector', dims: dimensions, index: true, similarity: 'cosine', index_options: { type: 'hnsw' } },
      vector_f32: { type: 'binary' },
      principals: keyword,
      acl_restricted: { type: 'boolean' },
      metadata: { type: 'object', enabled: false },
      additional_metadata: { type: 'object', enabled: false },
      filter_kv: keyword,
      source_type: keyword,
      is_app: { type: 'boolean' },
      created_at: { type: 'long' },
      updated_at: { type: 'long' },
      expires_at: { type: 'long' },
      version: { type: 'long' },
    },
  };
}

const MATCH_NONE: estypes.QueryDslQueryContainer = { match_none: {} };

function termsOrNone(field: string, values: readonly (string | boolean)[]): estypes.QueryDslQueryContainer {
  return values.length === 0 ? MATCH_NONE : { terms: { [field]: [...values] } };
}

function anyOf(...should: estypes.QueryDslQueryContainer[]): estypes.QueryDslQueryContainer {
  return { bool: { should, minimum_should_match: 1 } };
}

export function esFilters(filter: SearchFilter | undefined): estypes.QueryDslQueryContainer[] {
  if (!filter) return [];
  const clauses: estypes.QueryDslQueryContainer[] = [];
  if (filter.stores) clauses.push(termsOrNone('store', filter.stores));
  if (filter.collections) clauses.push(termsOrNone('collection', filter.collections));
  if (filter.itemIds) clauses.push(termsOrNone('item_id', filter.itemIds));
  if (filter.now !== undefined) {
    const now = Math.floor(filter.now);
    clauses.push(anyOf({ bool: { must_not: [{ exists: { field: 'expires_at' } }] } }, { range: { expires_at: { gt: now } } }));
  }
  if (filter.includeApps === false) clauses.push({ term: { is_app: false } });
  if (filter.principalsAny) {
    clauses.push(anyOf({ term: { acl_restricted: false } }, { terms: { principals: [PUBLIC_PRINCIPAL, ...filter.principalsAny] } }));
  }
  for (const group of [...filterTokenGroups('m', filter.metadata), ...filterTokenGroups('a', filter.additionalMetadata)]) {
    clauses.push(termsOrNone('filter_kv', group));
  }
  return clauses;
}

function toSource(doc: ChunkDoc): ChunkSource {
  const vector = doc.vector instanceof Float32Array ? doc.vector : Float32Array.from(doc.vector);
  return {
    chunk_id: doc.chunkId,
    item_id: doc.itemId,
    store: doc.store,
    collection: doc.collection,
    title: doc.title,
    text: doc.text,
    vector: Array.from(vector),
    vector_f32: encodeVector(vector),
    principals: doc.principals,
    acl_restricted: doc.principals !== null,
    metadata: doc.metadata,
    additional_metadata: doc.additionalMetadata,
    filter_kv: chunkFilterTokens(doc),
    source_type: doc.sourceType,
    is_app: doc.isApp,
    created_at: integer(doc.createdAt, 'createdAt'),
    updated_at: integer(doc.updatedAt, 'updatedAt'),
    expires_at: doc.expiresAt === null ? null : integer(doc.expiresAt, 'expiresAt'),
    version: integer(doc.version, 'version'),
  };
}

function toDoc(source: ChunkSource): Omit<ChunkDoc, 'vector'> {
  return {
    chunkId: source.chunk_id,
    itemId: source.item_id,
    store: source.store,
    collection: source.collection,
    title: source.title ?? null,
    text: source.text,
    principals: source.principals ?? null,
    metadata: source.metadata ?? {},
    additionalMetadata: source.additional_metadata ?? {},
    sourceType: source.source_type ?? null,
    isApp: source.is_app,
    createdAt: source.created_at,
    updatedAt: source.updated_at,
    expiresAt: source.expires_at ?? null,
    version: source.version,
  };
}

function toChunkDoc(source: ChunkSource): ChunkDoc {
  return { ...toDoc(source), vector: sourceVector(source) };
}

function sourceVector(source: Pick<ChunkSource, 'vector' | 'vector_f32'>): Float32Array {
  return source.vector_f32 ? decodeVector(source.vector_f32) : Float32Array.from(source.vector ?? []);
}

function toLeanCandidate(hit: estypes.SearchHit<ChunkSource>, score: number): LeanCandidate {
  if (!hit._source) throw new Error(`search hit ${hit._id} has no _source`);
  const s = hit._source;
  const doc = { chunkId: s.chunk_id, itemId: s.item_id, text: s.text, version: s.version };
  return { chunkId: doc.chunkId, itemId: doc.itemId, score, doc };
}

function toCandidate(hit: estypes.SearchHit<ChunkSource>, score: number): Candidate {
  if (!hit._source) throw new Error(`search hit ${hit._id} has no _source`);
  const doc = toDoc(hit._source);
  return { chunkId: doc.chunkId, itemId: doc.itemId, score, doc };
}

function encodeVector(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

function decodeVector(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

function integer(value: number, what: string): number {
  if (!Number.isSafeInteger(value)) throw new SearchIndexError('invalid_argument', `${what} must be an integer, got ${value}`);
  return value;
}

function notFound(indexName: string): SearchIndexError {
  return new SearchIndexError('index_not_found', `search index ${indexName} does not exist`);
}

function isErrorType(error: unknown, type: string): boolean {
  if (!(error instanceof errors.ResponseError)) return false;
  const body = error.meta.body as { error?: { type?: string } } | undefined;
  return body?.error?.type === type;
}
