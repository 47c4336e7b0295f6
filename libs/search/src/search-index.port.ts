/**
 * The search index port: keyword (BM25) and vector candidates over chunks, with filters.
 * Two adapters: LanceDB (embedded default) and Elasticsearch (production).
 * One contract suite is written for both (test/integration/search-index.contract.ts). LanceDB passes it in every
 * `npm test`; the Elasticsearch run needs a server (`npm run test:production-adapters`) and is recorded in
 * docs/spec-coverage.md, which says whether it has been made.
 *
 * Adapters return candidates with their raw engine score; fusion and ranking live in the domain.
 */

export type Store = 'knowledge' | 'memory';
export type Scalar = string | number | boolean | null;

export interface ChunkDoc {
  /** Deterministic id, unique within a physical index. */
  chunkId: string;
  /** The ingested item (source) id. */
  itemId: string;
  store: Store;
  collection: string;
  title: string | null;
  /** What is indexed for keyword search (together with the title) and returned. */
  text: string;
  vector: Float32Array | number[];
  /** ACL principals; null = unrestricted (no ACL). An empty list is restricted to nobody. */
  principals: string[] | null;
  /** Database-schema metadata, filterable by exact value. */
  metadata: Record<string, Scalar>;
  /** Free-form, filterable by exact value (e.g. connector_id, resource_id). */
  additionalMetadata: Record<string, Scalar>;
  /** e.g. 'memory' | 'file' | 'app' */
  sourceType: string | null;
  /** Connector/app content (query_apps=false excludes it). */
  isApp: boolean;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
  /** Epoch ms; expired chunks are never returned when filter.now is given. */
  expiresAt: number | null;
  /** Event log position; an upsert/delete with a lower version than stored must not win. */
  version: number;
}

export interface SearchFilter {
  /** Each list below: undefined = no constraint, [] = matches nothing. */
  stores?: Store[];
  collections?: string[];
  itemIds?: string[];
  /** Exclude chunks with expiresAt <= now. */
  now?: number;
  /** Default true; false excludes isApp chunks. */
  includeApps?: boolean;
  /**
   * null/undefined = no ACL filtering. Otherwise keep chunks whose principals are null (unrestricted),
   * contain PUBLIC_PRINCIPAL, or overlap this list.
   */
  principalsAny?: string[] | null;
  /** Key → value (equality) or values (IN). Values compare by type: 1 does not match '1'. */
  metadata?: Record<string, Scalar | Scalar[]>;
  additionalMetadata?: Record<string, Scalar | Scalar[]>;
}

/** A chunk's vector alone (getVectors). */
export type ChunkVector = { chunkId: string; vector: Float32Array };

/** What a lean search returns of a chunk: enough to fuse, check against the read model and answer with its text. */
export type LeanDoc = Pick<ChunkDoc, 'chunkId' | 'itemId' | 'text' | 'version'>;

export interface LeanCandidate {
  chunkId: string;
  itemId: string;
  /** Raw engine score: BM25 for keyword search, cosine similarity (1 - cosine distance) for vector search. */
  score: number;
  doc: LeanDoc;
}

export interface Candidate extends LeanCandidate {
  doc: Omit<ChunkDoc, 'vector'>;
}

export type KeywordOperator = 'or' | 'and' | 'phrase';

/**
 * Which fields of a chunk a search or listing returns. `full` (the default): the whole document (searches leave out
 * the vector, listings include it). `lean`: LeanDoc only, with the same hits, order and scores; the engine reads
 * four columns per hit instead of fifteen (measured ~30% of a query's engine CPU), so the query path asks for it.
 */
export type DocFields = 'full' | 'lean';

export interface SearchOptions {
  limit: number;
  filter?: SearchFilter;
  fields?: DocFields;
}

export interface KeywordSearchOptions extends SearchOptions {
  operator?: KeywordOperator;
}

export interface ListChunksOptions {
  filter?: SearchFilter;
  limit?: number;
  offset?: number;
  fields?: 'full';
}

/** A lean listing: every chunk the filter matches, in no particular order (no paging). */
export interface LeanListChunksOptions {
  filter: SearchFilter;
  fields: 'lean';
}

export interface SearchIndex {
  readonly engine: 'lancedb' | 'elasticsearch';
  /** Idempotent. Creating an existing index with other dimensions is an error. */
  createIndex(indexName: string, opts: { dimensions: number }): Promise<void>;
  /** Idempotent. */
  dropIndex(indexName: string): Promise<void>;
  indexExists(indexName: string): Promise<boolean>;
  /** Insert or replace by chunkId; a doc whose version is lower than the stored one is ignored. */
  upsert(indexName: string, docs: ChunkDoc[]): Promise<void>;
  /** Removes all chunks of those items whose version is <= the given one (newer chunks are kept). */
  deleteItems(indexName: string, itemIds: string[], version: number): Promise<void>;
  /** `deleteItems` with a version per item (an indexing batch's stale chunks), for many items in few engine calls. */
  deleteItemVersions(indexName: string, items: { itemId: string; version: number }[]): Promise<void>;
  /** At least one of collections/itemIds must be given; both given = both must match. */
  deleteWhere(indexName: string, filter: Pick<SearchFilter, 'collections' | 'itemIds'>): Promise<void>;
  /**
   * Best first. `or` (default): any term; `and`: every (non stop word) term; `phrase`: the exact phrase.
   * With `fields: 'lean'`, the hits carry LeanDocs (DocFields).
   */
  keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions & { fields: 'lean' }): Promise<LeanCandidate[]>;
  keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions & { fields?: 'full' }): Promise<Candidate[]>;
  /** Nearest first, by cosine similarity. With `fields: 'lean'`, the hits carry LeanDocs (DocFields). */
  vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions & { fields: 'lean' }): Promise<LeanCandidate[]>;
  vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions & { fields?: 'full' }): Promise<Candidate[]>;
  /** With vectors (Float32Array), in the order asked; unknown ids are skipped. */
  getChunks(indexName: string, chunkIds: string[]): Promise<ChunkDoc[]>;
  /**
   * Only the vectors, in the order asked; unknown ids are skipped: thinking mode re-scores candidates whose other
   * fields it holds already. At 60,000 knowledge chunks, 100 ids: about 18 ms instead of 42 for getChunks.
   */
  getVectors(indexName: string, chunkIds: string[]): Promise<ChunkVector[]>;
  /**
   * `fields: 'lean'`: every chunk the filter matches, as LeanDocs in no particular order: the query path's read of a
   * few known items' chunks (conversation context). At 40k memory chunks, 15 items: 7 ms instead of 11 for a full
   * listing, which reads every column and the vector and sorts.
   */
  listChunks(indexName: string, opts: LeanListChunksOptions): Promise<LeanDoc[]>;
  /** With vectors, in a stable order by chunkId (byte order). */
  listChunks(indexName: string, opts?: ListChunksOptions): Promise<ChunkDoc[]>;
  count(indexName: string, filter?: SearchFilter): Promise<number>;
  /** Compacts and brings every engine index up to date; loses nothing. */
  optimize(indexName: string): Promise<void>;
  /** Bytes and entries of each cache the engine keeps in this process, by name, when it caches anything (reported on /metrics). */
  cacheUsage?(): Record<string, { bytes: number; entries: number }>;
  close(): Promise<void>;
}

/** A principal that every caller holds: chunks carrying it are visible whatever principalsAny says. */
export const PUBLIC_PRINCIPAL = '__public__';

export type SearchIndexErrorCode = 'index_not_found' | 'invalid_argument' | 'dimension_mismatch';

/** Reserved: no chunk or item id may contain it (the embedded engine packs ids and text into one column with it). */
export const ID_SEPARATOR = '\u001f';

/** Both adapters reject, before writing anything, a doc whose chunk or item id holds ID_SEPARATOR. */
export function assertDocIds(docs: Pick<ChunkDoc, 'chunkId' | 'itemId'>[]): void {
  for (const doc of docs) {
    if (doc.chunkId.includes(ID_SEPARATOR) || doc.itemId.includes(ID_SEPARATOR)) {
      throw new SearchIndexError('invalid_argument', `chunk ${JSON.stringify(doc.chunkId)}: chunk and item ids may not contain U+001F`);
    }
  }
}

/** A typed error so callers can map it without parsing engine messages. */
export class SearchIndexError extends Error {
  constructor(
    readonly code: SearchIndexErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SearchIndexError';
  }
}
