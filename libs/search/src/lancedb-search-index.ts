import { connect, type Connection, Index, type IndexConfig, MatchQuery, Operator, Session, type Table } from '@lancedb/lancedb';
import type { Table as ArrowTable } from 'apache-arrow';
import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lock } from 'proper-lockfile';
import { assertValidIndexName } from './index-name';
import {
  ACL_COLUMN,
  ACL_COLUMN_SQL,
  EXPIRY_COLUMN,
  EXPIRY_COLUMN_SQL,
  chunksToArrow,
  chunkTableSchema,
  DOC_COLUMNS,
  FTS_COLUMN,
  ftsText,
  LEAN_COLUMN,
  LEAN_COLUMN_SQL,
  LEAN_COLUMNS,
  toCandidates,
  toChunkDocs,
  toChunkVectors,
  toLeanCandidates,
  vectorDimensions,
} from './lancedb-chunk-table';
import { holdsPhrase, PHRASE_BOUNDARY, type PositionedToken, splitByBoundary } from './lancedb-phrase';
import { leanCandidate, type ResidentInput, ResidentTable, ResidentTables } from './lancedb-resident-table';
import { lanceWhere, sqlIn, sqlInteger, sqlString } from './lancedb-where';
import {
  type Candidate,
  type ChunkDoc,
  type ChunkVector,
  type KeywordSearchOptions,
  type LeanCandidate,
  type LeanDoc,
  type LeanListChunksOptions,
  type ListChunksOptions,
  type SearchFilter,
  type SearchIndex,
  type SearchOptions,
  assertDocIds,
  SearchIndexError,
} from './search-index.port';

export interface LanceDbSearchIndexOptions {
  /** Directory holding one LanceDB table per physical index. */
  dir: string;
  /** English stemming in the full-text index (default true). Applies to indexes created from now on. */
  ftsStemming?: boolean;
  /**
   * How stale a read may be with respect to writes made by other processes (or other instances on the
   * same directory), in seconds. Default 0: every read checks for a newer table version (measured cost
   * ~0.5 ms per query). null: never check (only this instance's own writes are seen). Writes always merge
   * against the latest version (they check it under the table's lock when this is not 0).
   */
  readConsistencyIntervalSeconds?: number | null;
  /**
   * The most `and` matches one phrase query checks for the phrase (more when twice its limit is more): its work stays
   * bounded when the words are common and seldom side by side, and a phrase match ranked below that many is not found.
   * 5,000 chunks of 850 characters take about 1.3 s to tokenize. Default 5,000.
   */
  phraseMatchesChecked?: number;
  /** Row count from which an IVF_FLAT (cosine) vector index is built; below it search is exact. Default 10 000. 0 disables. */
  vectorIndexThreshold?: number;
  /**
   * Each background optimize that folds new rows into the vector index adds a delta index, and a query searches
   * every delta and ranks each one's partitions: at 60k rows after a bulk ingest, 17 deltas made a vector query
   * take 15.6 ms instead of 8.0. Past this many deltas, the next background refresh retrains the index whole
   * (0.5 s at 60k rows, 100 dimensions). Default 4; 0 never retrains.
   */
  maxVectorIndexDeltas?: number;
  /**
   * Delay before the background optimize that folds new rows into the engine indexes after writes.
   * Throttled to at most one run per max(delay, last run's duration / maxMaintenanceShare). Default 1000 ms;
   * negative disables.
   */
  indexRefreshDelayMs?: number;
  /**
   * The largest share of the time a table's background optimize may take: runs are spaced by at least their own
   * duration divided by this. An optimize rewrites the table's indexes whole (LanceDB 0.37 merges new rows into a new
   * copy of each index), so its cost grows with the table (0.2 s at 20k rows, 0.7 s at 80k after five new rows); but
   * every write left unfolded is a small fragment that each query scans flat, and that costs more than the optimize:
   * with the engine alone under a steady trickle (5-row writes every 40 ms, one client querying), spacing runs by ten
   * times their duration (0.1) answered 5,452 queries in two minutes, by twice (0.5) 8,188. Default 0.5.
   */
  maxMaintenanceShare?: number;
  /**
   * Table versions older than this are removed by optimize; each version keeps the index copies it refers to on disk.
   * Queries read the newest version and finish in well under this. A table left idle is cleaned once more this long
   * after its last optimize, so superseded versions never outlive the writes that made them. Default 30 s.
   */
  versionRetentionMs?: number;
  /**
   * Bytes of index data (full-text postings, scalar and vector index pages) LanceDB keeps in memory, least recently
   * used dropped first. Every optimize writes the indexes anew under new paths, so without a bound the superseded ones
   * stay cached: under a steady trickle of writes the process grew by the size of the index at each optimize.
   * Default 256 MiB.
   */
  indexCacheBytes?: number;
  /** Bytes of file metadata and table manifests LanceDB keeps in memory (bounded the same way). Default 64 MiB. */
  metadataCacheBytes?: number;
  /**
   * Tables of at most this many rows are searched from a copy held in the process (lancedb-resident-table.ts): an
   * engine search costs about 4 ms whatever the table's size, the copy's a fraction of a millisecond. Default 5,000;
   * 0 searches every table in the engine.
   */
  residentMaxRows?: number;
  /** Bytes the copies of small tables may hold together, least recently used dropped first. Default 64 MiB. */
  residentCacheBytes?: number;
  /** Where background maintenance errors go (default console.warn); they never fail a caller. */
  onBackgroundError?: (error: unknown, indexName: string) => void;
}

const FTS_INDEX = `${FTS_COLUMN}_idx`;
/** A table lock whose holder has not refreshed it for this long is taken over (its holder is presumed dead). */
const LOCK_STALE_MS = 30_000;
/** The longest a write waits for another process's lock on a table before it fails. */
const LOCK_WAIT_MS = 10 * 60_000;
const VECTOR_INDEX = 'vector_idx';
/**
 * Scalar indexes on the columns every query filters on, so the prefilter of a search is answered from the
 * indexes instead of a scan of those columns over the whole table (at 50k rows the scan cost more than the search).
 */
const SCALAR_INDEXES: { column: string; config: () => Index }[] = [
  { column: 'collection', config: () => Index.bitmap() },
  { column: EXPIRY_COLUMN, config: () => Index.btree() },
  { column: 'filter_kv', config: () => Index.labelList() },
  { column: ACL_COLUMN, config: () => Index.labelList() },
  { column: 'is_app', config: () => Index.bitmap() },
  // Reads and deletes by item (an item's chunks; a memory's conversation neighbours at query time).
  { column: 'item_id', config: () => Index.btree() },
  // The merge-insert key: each upsert joins its rows to the table on chunk_id, which without an index is a scan of
  // the column (64 new rows into 60k: 51 ms p50, 28 ms with it; the scan grows with the table). getChunks too.
  { column: 'chunk_id', config: () => Index.btree() },
];
const scalarIndexName = (column: string) => `${column}_idx`;
/** Rows per merge-insert, so one call never materialises an unbounded batch. */
const UPSERT_SLICE = 5000;
/** Ids per `IN (...)` list. */
const ID_BATCH = 1000;
/** (item, version) clauses per delete predicate. */
const VERSION_BATCH = 200;

interface OpenTable {
  readonly name: string;
  readonly table: Table;
  readonly dimensions: number;
  /**
   * Tail of this table's write queue: writes and maintenance run one at a time, each under the table's lock file;
   * searches never wait, except a phrase (or first) keyword search that folds new rows into the index first.
   */
  writes: Promise<unknown>;
  refreshTimer?: NodeJS.Timeout;
  /** The pass that removes versions the last optimize had to keep (they were younger than the retention). */
  cleanupTimer?: NodeJS.Timeout;
  lastRefreshMs: number;
  hasVectorIndex: boolean;
  /** Scalar indexes a table made before they existed still lacks (built by the next background refresh). */
  missingScalarIndexes: string[];
  /**
   * A full-text index made with word positions (before phrase queries were checked in process): the next background
   * refresh replaces it with one without, same tokenizer. Queries are answered alike by either meanwhile.
   */
  ftsWithPositions?: FtsTokenizer;
  /**
   * Until when (epoch ms) a keyword search skips the FTS index statistics: the last look found the index covering
   * rows, which is all such a search needs to know (prepareKeywordIndex). Reading them on every query was an engine
   * call of its own before each search.
   */
  ftsCoversRowsUntil?: number;
  /** The table has held a row (hasRows); until then every search first counts them. */
  hasRows?: boolean;
}

/** How long a look at the FTS index statistics that found rows covered answers for keyword searches. */
const FTS_STATS_TTL_MS = 1000;

/**
 * The embedded engine: one LanceDB table per physical index, native BM25 full-text search
 * (English stemming and stop words) and exact cosine vector search (IVF_FLAT past a size threshold).
 *
 * Tables of at most residentMaxRows rows are searched from a copy held in the process (lancedb-resident-table.ts),
 * kept up to date by this process's writes and, for other processes' writes, from the table at the next search.
 *
 * Freshness: writes schedule a background optimize that folds new rows into the engine indexes; until
 * then keyword queries scan the new rows flat, and the case LanceDB gets wrong folds them first
 * (see prepareKeywordIndex).
 */
export class LanceDbSearchIndex implements SearchIndex {
  readonly engine = 'lancedb' as const;

  private readonly stem: boolean;
  private readonly vectorIndexThreshold: number;
  private readonly maxVectorIndexDeltas: number;
  private readonly refreshDelayMs: number;
  private readonly maxMaintenanceShare: number;
  private readonly versionRetentionMs: number;
  private readonly onBackgroundError: (error: unknown, indexName: string) => void;
  private readonly residents: ResidentTables;
  private connection?: Promise<Connection>;
  private readonly session: Session;
  private readonly tables = new Map<string, Promise<OpenTable>>();
  private readonly creating = new Map<string, Promise<void>>();
  private locksDir?: Promise<void>;
  private closed = false;

  constructor(private readonly options: LanceDbSearchIndexOptions) {
    this.stem = options.ftsStemming ?? true;
    this.vectorIndexThreshold = options.vectorIndexThreshold ?? 10_000;
    this.maxVectorIndexDeltas = options.maxVectorIndexDeltas ?? 4;
    this.refreshDelayMs = options.indexRefreshDelayMs ?? 1000;
    this.maxMaintenanceShare = options.maxMaintenanceShare ?? 0.5;
    if (!(this.maxMaintenanceShare > 0 && this.maxMaintenanceShare <= 1)) throw new Error(`maxMaintenanceShare must be in (0, 1], got ${this.maxMaintenanceShare}`);
    this.versionRetentionMs = options.versionRetentionMs ?? 30_000;
    this.residents = new ResidentTables(options.residentMaxRows ?? 5000, options.residentCacheBytes ?? 64 * 2 ** 20);
    this.session = new Session(BigInt(options.indexCacheBytes ?? 256 * 2 ** 20), BigInt(options.metadataCacheBytes ?? 64 * 2 ** 20));
    this.onBackgroundError =
      options.onBackgroundError ??
      ((error, indexName) => console.warn(`search index ${indexName}: background maintenance failed`, error));
  }

  async createIndex(indexName: string, opts: { dimensions: number }): Promise<void> {
    assertValidIndexName(indexName);
    if (!Number.isSafeInteger(opts.dimensions) || opts.dimensions <= 0) {
      throw new SearchIndexError('invalid_argument', `dimensions must be a positive integer, got ${opts.dimensions}`);
    }
    // Concurrent creations of one table conflict inside LanceDB (create vs. index commits): queue them
    // in this process, and retry the idempotent steps when another process raced us.
    const previous = this.creating.get(indexName) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.createTable(indexName, opts.dimensions);
        } catch (error) {
          if (error instanceof SearchIndexError || attempt === 3) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
    });
    this.creating.set(indexName, run);
    try {
      await run;
    } finally {
      if (this.creating.get(indexName) === run) this.creating.delete(indexName);
    }
  }

  async dropIndex(indexName: string): Promise<void> {
    assertValidIndexName(indexName);
    const cached = this.tables.get(indexName);
    this.tables.delete(indexName);
    this.residents.forget(indexName);
    if (cached) {
      const open = await cached.catch(() => undefined);
      if (open) {
        clearTimeout(open.refreshTimer);
        clearTimeout(open.cleanupTimer);
        await open.writes;
        open.table.close();
      }
    }
    if (await this.indexExists(indexName)) await (await this.db()).dropTable(indexName);
  }

  async indexExists(indexName: string): Promise<boolean> {
    assertValidIndexName(indexName);
    const names = await (await this.db()).tableNames();
    return names.includes(indexName);
  }

  async upsert(indexName: string, docs: ChunkDoc[]): Promise<void> {
    assertValidIndexName(indexName);
    if (docs.length === 0) return;
    assertDocIds(docs);
    const open = await this.open(indexName);
    const newest = newestPerChunk(docs);
    const slices: ReturnType<typeof chunksToArrow>[] = [];
    for (let start = 0; start < newest.length; start += UPSERT_SLICE) {
      slices.push(chunksToArrow(newest.slice(start, start + UPSERT_SLICE), open.dimensions));
    }
    // Tokenized before the lock, for the copy held in the process, if there is one; as the table will return them.
    const resident = this.residents.holds(open.name) ? await this.residentInputs(open, newest.map(asStored)) : undefined;
    await this.serialized(open, () =>
      this.committed(
        open,
        async () => {
          for (const slice of slices) {
            await open.table
              .mergeInsert('chunk_id')
              // Equal versions replace (a redelivered event is identical); older ones never do.
              .whenMatchedUpdateAll({ where: 'target.version <= source.version' })
              .whenNotMatchedInsertAll()
              .execute(slice);
          }
        },
        resident && ((table) => resident.forEach((input) => table.putUnlessOlder(input))),
      ),
    );
    this.scheduleRefresh(open);
  }

  async deleteItems(indexName: string, itemIds: string[], version: number): Promise<void> {
    const open = await this.openIfExists(indexName);
    if (!open || itemIds.length === 0) return;
    const maxVersion = sqlInteger(version, 'version');
    const items = new Set(itemIds);
    await this.serialized(open, () =>
      this.committed(
        open,
        async () => {
          for (let start = 0; start < itemIds.length; start += ID_BATCH) {
            await open.table.delete(`${sqlIn('item_id', itemIds.slice(start, start + ID_BATCH))} AND version <= ${maxVersion}`);
          }
        },
        (table) => table.removeWhere((doc) => items.has(doc.itemId) && doc.version <= Number(maxVersion)),
      ),
    );
    this.scheduleRefresh(open);
  }

  async deleteItemVersions(indexName: string, items: { itemId: string; version: number }[]): Promise<void> {
    const open = await this.openIfExists(indexName);
    if (!open || items.length === 0) return;
    const upTo = new Map<string, number>();
    for (const i of items) upTo.set(i.itemId, Math.max(upTo.get(i.itemId) ?? -Infinity, Math.floor(Number(sqlInteger(i.version, 'version')))));
    const ids = [...upTo.keys()];
    const staleRow = (doc: { itemId: string; version: number }) => doc.version <= (upTo.get(doc.itemId) ?? -Infinity);
    await this.serialized(open, () => this.committed(open, async () => {
      for (let start = 0; start < ids.length; start += ID_BATCH) {
        // A delete commits a table version even when nothing matches (an item's first version has no predecessor, the
        // common case on ingest and in a rebuild): the items' rows are looked up first (btree on item_id, one read for
        // the slice), and only those that hold a chunk at or below their version are deleted.
        const slice = ids.slice(start, start + ID_BATCH);
        const held = await open.table.query().where(sqlIn('item_id', slice)).select(['item_id', 'version']).toArrow();
        const itemCol = held.getChild('item_id')!;
        const versionCol = held.getChild('version')!;
        const stale = new Set<string>();
        for (let row = 0; row < held.numRows; row++) {
          const itemId = String(itemCol.get(row));
          if (Number(versionCol.get(row)) <= upTo.get(itemId)!) stale.add(itemId);
        }
        const clauses = [...stale].map((itemId) => `(item_id = ${sqlString(itemId)} AND version <= ${upTo.get(itemId)})`);
        for (let at = 0; at < clauses.length; at += VERSION_BATCH) await open.table.delete(clauses.slice(at, at + VERSION_BATCH).join(' OR '));
      }
    }, (table) => table.removeWhere(staleRow)));
    this.scheduleRefresh(open);
  }

  async deleteWhere(indexName: string, filter: Pick<SearchFilter, 'collections' | 'itemIds'>): Promise<void> {
    assertValidIndexName(indexName);
    if (filter.collections === undefined && filter.itemIds === undefined) {
      throw new SearchIndexError('invalid_argument', 'deleteWhere needs collections or itemIds (use dropIndex to empty an index)');
    }
    if (filter.collections?.length === 0 || filter.itemIds?.length === 0) return;
    const open = await this.openIfExists(indexName);
    if (!open) return;
    const predicate = lanceWhere({ collections: filter.collections, itemIds: filter.itemIds });
    if (!predicate) return;
    const collections = filter.collections && new Set(filter.collections);
    const items = filter.itemIds && new Set(filter.itemIds);
    await this.serialized(open, () =>
      this.committed(
        open,
        async () => void (await open.table.delete(predicate)),
        (table) => table.removeWhere((doc) => (!collections || collections.has(doc.collection)) && (!items || items.has(doc.itemId))),
      ),
    );
    this.scheduleRefresh(open);
  }

  keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions & { fields: 'lean' }): Promise<LeanCandidate[]>;
  keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions & { fields?: 'full' }): Promise<Candidate[]>;
  async keywordSearch(indexName: string, query: string, opts: KeywordSearchOptions): Promise<LeanCandidate[] | Candidate[]> {
    const lean = opts.fields === 'lean';
    const resident = await this.residentSearch(indexName, opts, (open, table) => this.residentKeyword(open, table, query, opts));
    if (resident) return lean ? resident.map(leanCandidate) : resident;
    const columns = lean ? LEAN_COLUMNS : DOC_COLUMNS;
    const found = opts.operator === 'phrase' ? await this.phraseQuery(indexName, query, opts, columns) : await this.keywordQuery(indexName, query, opts, columns);
    if (!found) return [];
    const { result, rows } = found;
    const score = (i: number) => Number(result.getChild('_score')!.get(i));
    const hits = lean ? toLeanCandidates(result, score) : toCandidates(result, score);
    return rows ? rows.map((row) => hits[row]) : hits;
  }

  vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions & { fields: 'lean' }): Promise<LeanCandidate[]>;
  vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions & { fields?: 'full' }): Promise<Candidate[]>;
  async vectorSearch(indexName: string, vector: Float32Array | number[], opts: SearchOptions): Promise<LeanCandidate[] | Candidate[]> {
    const lean = opts.fields === 'lean';
    const resident = await this.residentSearch(indexName, opts, async (open, table) => {
      assertDimensions(vector, open);
      return table.vector(vector, opts.limit, opts.filter);
    });
    if (resident) return lean ? resident.map(leanCandidate) : resident;
    const result = await this.vectorQuery(indexName, vector, opts, lean ? LEAN_COLUMNS : DOC_COLUMNS);
    if (!result) return [];
    const score = (i: number) => 1 - Number(result.getChild('_distance')!.get(i));
    return lean ? toLeanCandidates(result, score) : toCandidates(result, score);
  }

  /**
   * Runs a write (already under the table's lock, so no other commit comes between) and, when the process holds a copy
   * of the table, applies `change` to it with the versions the table had before and after (ResidentTables.apply).
   */
  private async committed(open: OpenTable, write: () => Promise<void>, change: ((table: ResidentTable) => void) | undefined): Promise<void> {
    const before = change && this.residents.holds(open.name) ? await open.table.version() : undefined;
    await write();
    if (before !== undefined) this.residents.apply(open.name, before, await open.table.version(), change!);
  }

  /** Docs as the copy holds them: with their full-text column's tokens. */
  private async residentInputs(open: OpenTable, docs: ChunkDoc[]): Promise<ResidentInput[]> {
    const tokens = await this.tokenizeMany(open, docs.map(ftsText));
    return docs.map((doc, i) => ({ doc, tokens: tokens[i].map((t) => t.text) }));
  }

  /**
   * A search answered from the table's copy in the process (ResidentTables), or undefined when the engine answers: the
   * table is past residentMaxRows, or its copy could not be brought up to date (reported; the engine answers then).
   */
  private async residentSearch(
    indexName: string,
    opts: SearchOptions,
    search: (open: OpenTable, table: ResidentTable) => Promise<Candidate[]>,
  ): Promise<Candidate[] | undefined> {
    if (!this.residents.enabled) return undefined;
    const open = await this.open(indexName);
    lanceWhere(opts.filter); // the same validation of the filter as the engine's path
    const table = await this.residentCopy(open);
    return table ? search(open, table) : undefined;
  }

  /** The table's up-to-date copy in the process, or undefined when the engine answers (see residentSearch). */
  private async residentCopy(open: OpenTable): Promise<ResidentTable | undefined> {
    if (!this.residents.enabled) return undefined;
    try {
      return await this.residents.get(open.name, this.residentSource(open));
    } catch (error) {
      this.residents.forget(open.name);
      this.onBackgroundError(error, open.name);
      return undefined;
    }
  }

  private residentSource(open: OpenTable) {
    const fetch = async (where: string | undefined): Promise<ResidentInput[]> => {
      const listing = open.table.query().select([...DOC_COLUMNS, 'vector']);
      if (where) listing.where(where);
      return this.residentInputs(open, toChunkDocs(await listing.toArrow()));
    };
    return {
      version: () => open.table.version(),
      countRows: () => open.table.countRows(),
      heldVersions: async () => {
        const held = await open.table.query().select(['chunk_id', 'version']).toArrow();
        const ids = held.numRows ? (held.getChild('chunk_id')!.toArray() as string[]) : [];
        const versions = held.numRows ? held.getChild('version')! : undefined;
        return new Map(ids.map((id, row) => [id, Number(versions!.get(row))]));
      },
      fetch: async (ids: string[] | undefined) => {
        if (ids === undefined) return fetch(undefined);
        const out: ResidentInput[] = [];
        for (let start = 0; start < ids.length; start += ID_BATCH) out.push(...(await fetch(sqlIn('chunk_id', ids.slice(start, start + ID_BATCH)))));
        return out;
      },
    };
  }

  /** `or`, `and` and `phrase` over a table's copy: the query goes through the table's own tokenizer. */
  private async residentKeyword(open: OpenTable, table: ResidentTable, query: string, opts: KeywordSearchOptions): Promise<Candidate[]> {
    const text = query.trim();
    if (text === '' || opts.limit <= 0 || table.size === 0) return [];
    if (opts.operator !== 'phrase') {
      const tokens = await open.table.tokenize(text, { column: FTS_COLUMN });
      return table.keyword(tokens.map((t) => t.text), opts.operator === 'and' ? 'and' : 'or', opts.limit, opts.filter);
    }
    const tokens = await open.table.tokenize(`${text} ${PHRASE_BOUNDARY}`, { column: FTS_COLUMN });
    const boundary = tokens[tokens.length - 1]?.text;
    const phrase = tokens.slice(0, -1);
    if (phrase.length === 0 || boundary === undefined) return [];
    const most = Math.max(this.options.phraseMatchesChecked ?? 5000, 2 * opts.limit);
    const matches = table.keyword(phrase.map((t) => t.text), 'and', most, opts.filter);
    if (phrase.length === 1) return matches.slice(0, opts.limit);
    // Checked best first, in growing slices, as the engine's path asks for growing rounds of matches.
    const found: Candidate[] = [];
    for (let start = 0, size = Math.max(2 * opts.limit, 20); start < matches.length && found.length < opts.limit; start += size, size *= 4) {
      const slice = matches.slice(start, start + size);
      const held = await this.holdPhrase(open, phrase, slice.map((hit) => ftsText(hit.doc)));
      slice.forEach((hit, k) => held[k] && found.push(hit));
    }
    return found.slice(0, opts.limit);
  }

  /** Each text's tokens by the table's full-text tokenizer, in one call where the boundary allows. */
  private async tokenizeMany(open: OpenTable, texts: string[]): Promise<PositionedToken[][]> {
    if (texts.length === 0) return [];
    const tokenize = (text: string) => open.table.tokenize(text, { column: FTS_COLUMN });
    const tokens = await tokenize(`${texts.join(` ${PHRASE_BOUNDARY} `)} ${PHRASE_BOUNDARY}`);
    const boundary = tokens[tokens.length - 1]?.text;
    return (boundary !== undefined && splitByBoundary(tokens.slice(0, -1), boundary, texts.length)) || (await Promise.all(texts.map(tokenize)));
  }

  /** The `or` / `and` full-text search with these columns and `_score`; undefined when there is nothing to search for. */
  private async keywordQuery(
    indexName: string,
    query: string,
    opts: KeywordSearchOptions,
    columns: string[],
  ): Promise<{ result: ArrowTable; rows?: number[] } | undefined> {
    const open = await this.open(indexName);
    const text = query.trim();
    if (text === '' || opts.limit <= 0) return undefined;
    if (!(await this.hasRows(open))) return undefined;
    await this.prepareKeywordIndex(open);
    return { result: await this.matchQuery(open, text, opts.operator === 'and' ? Operator.And : Operator.Or, opts, columns, opts.limit) };
  }

  private matchQuery(open: OpenTable, text: string, operator: Operator, opts: KeywordSearchOptions, columns: string[], limit: number): Promise<ArrowTable> {
    const where = lanceWhere(opts.filter);
    // `where` on a full-text query is a prefilter in LanceDB 0.37 (verified by the contract suite).
    const search = open.table.query().fullTextSearch(new MatchQuery(text, FTS_COLUMN, { operator })).select([...columns, '_score']).limit(limit);
    if (where) search.where(where);
    return search.toArrow();
  }

  /**
   * A phrase query on an index without word positions (lancedb-phrase.ts): the `and` matches, best first, each checked
   * for the phrase; when fewer than `limit` pass and there were more matches, four times as many are asked for, until
   * `limit` pass, the matches run out, or `phraseMatchesChecked` (or twice `limit`) were asked for. Ranked by the `and`
   * match's BM25 score. Returns the last round's rows that pass.
   */
  private async phraseQuery(
    indexName: string,
    query: string,
    opts: KeywordSearchOptions,
    columns: string[],
  ): Promise<{ result: ArrowTable; rows: number[] } | undefined> {
    const open = await this.open(indexName);
    const text = query.trim();
    if (text === '' || opts.limit <= 0) return undefined;
    if (!(await this.hasRows(open))) return undefined;
    await this.prepareKeywordIndex(open);
    // The boundary's token comes back last: what the tokenizer makes of it, whatever stemming does to it.
    const tokens = await open.table.tokenize(`${text} ${PHRASE_BOUNDARY}`, { column: FTS_COLUMN });
    const boundary = tokens[tokens.length - 1]?.text;
    const phrase = tokens.slice(0, -1);
    if (phrase.length === 0 || boundary === undefined) return undefined; // stop words only: nothing to match
    const select = [...new Set([...columns, 'chunk_id', FTS_COLUMN])];
    const verdicts = new Map<string, boolean>(); // chunk id -> holds the phrase, across rounds
    const most = Math.max(this.options.phraseMatchesChecked ?? 5000, 2 * opts.limit);
    for (let limit = Math.min(Math.max(2 * opts.limit, 20), most); ; limit = Math.min(4 * limit, most)) {
      const result = await this.matchQuery(open, text, Operator.And, opts, select, limit);
      const ids = result.numRows ? result.getChild('chunk_id')!.toArray() as string[] : [];
      if (phrase.length > 1) {
        const texts = result.numRows ? (result.getChild(FTS_COLUMN)!.toArray() as string[]) : [];
        const unchecked = ids.flatMap((id, row) => (verdicts.has(id) ? [] : [row]));
        const held = await this.holdPhrase(open, phrase, unchecked.map((row) => texts[row]));
        unchecked.forEach((row, k) => verdicts.set(ids[row], held[k]));
      }
      const rows = ids.flatMap((id, row) => (phrase.length === 1 || verdicts.get(id) ? [row] : []));
      if (rows.length >= opts.limit || result.numRows < limit || limit === most) return { result, rows: rows.slice(0, opts.limit) };
    }
  }

  /** Whether each text holds the phrase, tokenized by the index's tokenizer (tokenizeMany). */
  private async holdPhrase(open: OpenTable, phrase: PositionedToken[], texts: string[]): Promise<boolean[]> {
    return (await this.tokenizeMany(open, texts)).map((tokens) => holdsPhrase(phrase, tokens));
  }

  /** The cosine nearest neighbours with these columns and `_distance`; undefined for a limit of 0. */
  private async vectorQuery(
    indexName: string,
    vector: Float32Array | number[],
    opts: SearchOptions,
    columns: string[],
  ): Promise<ArrowTable | undefined> {
    const open = await this.open(indexName);
    assertDimensions(vector, open);
    if (opts.limit <= 0) return undefined;
    const where = lanceWhere(opts.filter);
    if (!(await this.hasRows(open))) return undefined;
    const search = open.table
      .vectorSearch(Float32Array.from(vector))
      .distanceType('cosine')
      .select([...columns, '_distance'])
      .limit(opts.limit);
    if (where) search.where(where); // prefilter (LanceDB's default for vector queries)
    return search.toArrow();
  }

  async getChunks(indexName: string, chunkIds: string[]): Promise<ChunkDoc[]> {
    const open = await this.open(indexName);
    const resident = await this.residentCopy(open);
    if (resident) return chunkIds.flatMap((id) => resident.chunk(id) ?? []);
    const wanted = [...new Set(chunkIds)];
    const found = new Map<string, ChunkDoc>();
    for (let start = 0; start < wanted.length; start += ID_BATCH) {
      const result = await open.table
        .query()
        .where(sqlIn('chunk_id', wanted.slice(start, start + ID_BATCH)))
        .select([...DOC_COLUMNS, 'vector'])
        .toArrow();
      for (const doc of toChunkDocs(result)) found.set(doc.chunkId, doc);
    }
    return chunkIds.flatMap((id) => {
      const doc = found.get(id);
      return doc ? [doc] : [];
    });
  }

  async getVectors(indexName: string, chunkIds: string[]): Promise<ChunkVector[]> {
    const open = await this.open(indexName);
    const resident = await this.residentCopy(open);
    if (resident) {
      return chunkIds.flatMap((chunkId) => {
        const vector = resident.vectorOf(chunkId);
        return vector ? [{ chunkId, vector }] : [];
      });
    }
    const wanted = [...new Set(chunkIds)];
    const found = new Map<string, Float32Array>();
    for (let start = 0; start < wanted.length; start += ID_BATCH) {
      const result = await open.table.query().where(sqlIn('chunk_id', wanted.slice(start, start + ID_BATCH))).select(['chunk_id', 'vector']).toArrow();
      for (const row of toChunkVectors(result)) found.set(row.chunkId, row.vector);
    }
    return chunkIds.flatMap((id) => {
      const vector = found.get(id);
      return vector ? [{ chunkId: id, vector }] : [];
    });
  }

  listChunks(indexName: string, opts: LeanListChunksOptions): Promise<LeanDoc[]>;
  listChunks(indexName: string, opts?: ListChunksOptions): Promise<ChunkDoc[]>;
  async listChunks(indexName: string, opts: ListChunksOptions | LeanListChunksOptions = {}): Promise<LeanDoc[] | ChunkDoc[]> {
    const open = await this.open(indexName);
    if (opts.fields === 'lean') {
      const listing = open.table.query().select(LEAN_COLUMNS);
      const where = lanceWhere(opts.filter);
      if (where) listing.where(where);
      return toLeanCandidates(await listing.toArrow(), () => 0).map((c) => c.doc);
    }
    if (opts.limit !== undefined && opts.limit <= 0) return [];
    const listing = open.table
      .query()
      .select([...DOC_COLUMNS, 'vector'])
      .orderBy({ columnName: 'chunk_id', ascending: true });
    const where = lanceWhere(opts.filter);
    if (where) listing.where(where);
    if (opts.offset) listing.offset(opts.offset);
    if (opts.limit !== undefined) listing.limit(opts.limit);
    return toChunkDocs(await listing.toArrow());
  }

  async count(indexName: string, filter?: SearchFilter): Promise<number> {
    const open = await this.open(indexName);
    return open.table.countRows(lanceWhere(filter));
  }

  /** Bytes and entries held by the engine's index and metadata caches (reported on /metrics). */
  cacheUsage(): Record<string, { bytes: number; entries: number }> {
    return {
      search_engine: { bytes: Number(this.session.sizeBytes()), entries: this.session.approxNumItems() },
      search_resident: this.residents.usage(),
    };
  }

  async optimize(indexName: string): Promise<void> {
    const open = await this.open(indexName);
    clearTimeout(open.refreshTimer);
    open.refreshTimer = undefined;
    await this.refresh(open);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.residents.clear();
    const tables = [...this.tables.values()];
    this.tables.clear();
    for (const pending of tables) {
      const open = await pending.catch(() => undefined);
      if (!open) continue;
      clearTimeout(open.refreshTimer);
      clearTimeout(open.cleanupTimer);
      await open.writes;
      open.table.close();
    }
    if (this.connection) (await this.connection).close();
  }

  private db(): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('LanceDbSearchIndex is closed'));
    const interval =
      this.options.readConsistencyIntervalSeconds === undefined ? 0 : this.options.readConsistencyIntervalSeconds;
    // The session goes in the options: connect()'s third argument is accepted and then dropped (LanceDB 0.37), which
    // left the default caches (6 GiB of index, 1 GiB of metadata) in place.
    this.connection ??= connect(this.options.dir, { session: this.session, ...(interval === null ? {} : { readConsistencyInterval: interval }) });
    return this.connection;
  }

  /** The cached handle of an existing table (SearchIndexError index_not_found otherwise). */
  private async open(indexName: string): Promise<OpenTable> {
    assertValidIndexName(indexName);
    let pending = this.tables.get(indexName);
    if (!pending) {
      pending = this.load(indexName);
      this.tables.set(indexName, pending);
      pending.catch(() => this.tables.get(indexName) === pending && this.tables.delete(indexName));
    }
    return pending;
  }

  private async openIfExists(indexName: string): Promise<OpenTable | undefined> {
    try {
      return await this.open(indexName);
    } catch (error) {
      if (error instanceof SearchIndexError && error.code === 'index_not_found') return undefined;
      throw error;
    }
  }

  private async load(indexName: string): Promise<OpenTable> {
    if (!(await this.indexExists(indexName))) {
      throw new SearchIndexError('index_not_found', `search index ${indexName} does not exist`);
    }
    const table = await (await this.db()).openTable(indexName);
    await addComputedColumns(table);
    const listed = await table.listIndices();
    const indexes = new Set(listed.map((index) => index.name));
    const open: OpenTable = {
      name: indexName,
      table,
      dimensions: vectorDimensions(await table.schema()),
      writes: Promise.resolve(),
      lastRefreshMs: 0,
      hasVectorIndex: indexes.has(VECTOR_INDEX),
      missingScalarIndexes: SCALAR_INDEXES.map((s) => s.column).filter((column) => !indexes.has(scalarIndexName(column))),
      ftsWithPositions: ftsTokenizerWithPositions(listed.find((index) => index.name === FTS_INDEX)),
    };
    // A table created before the scalar indexes existed gets them in the background; queries stay correct meanwhile.
    // So does one whose full-text index leaves rows out: the process that wrote them ended before its background
    // optimize ran (a rebuild's last pages, a killed process), and until a write here schedules one, every keyword
    // search would scan those rows flat (22,837 of 60,001 rows took a filtered keyword search from a few ms to 82).
    const fts = indexes.has(FTS_INDEX) ? await table.indexStats(FTS_INDEX) : undefined;
    if (open.missingScalarIndexes.length || open.ftsWithPositions || (fts?.numUnindexedRows ?? 0) > 0) this.scheduleRefresh(open);
    return open;
  }

  private async createTable(indexName: string, dimensions: number): Promise<void> {
    const db = await this.db();
    const existed = await this.indexExists(indexName);
    // existOk covers a concurrent creator; an existing table is opened, not re-created with another schema.
    const table = existed
      ? await db.openTable(indexName)
      : await db.createEmptyTable(indexName, chunkTableSchema(dimensions), { mode: 'create', existOk: true });
    try {
      const existing = vectorDimensions(await table.schema());
      if (existing !== dimensions) {
        throw new SearchIndexError(
          'dimension_mismatch',
          `search index ${indexName} exists with ${existing} dimensions, not ${dimensions}`,
        );
      }
      if (!(await hasIndex(table, FTS_INDEX))) {
        try {
          await table.createIndex(FTS_COLUMN, { config: ftsIndex({ stem: this.stem }), replace: false });
        } catch (error) {
          if (!(await hasIndex(table, FTS_INDEX))) throw error; // else a concurrent creator won the race
        }
      }
      await addComputedColumns(table);
      await createScalarIndexes(table, SCALAR_INDEXES.map((s) => s.column));
    } finally {
      table.close();
    }
  }

  /**
   * Runs a write after the previous ones on this table, holding the table's lock file while it runs. LanceDB
   * detects no conflict between two merge-inserts of the same new chunk id from different handles: both insert it
   * (lancedb/lancedb#3377, lance-format/lance#8949), and a chunk then comes back twice. Within this instance the
   * queue orders writes; the lock orders them with other processes on the same directory (a `crs projections rebuild
   * search-index` writes into the generation the service indexes into). A lock left by a killed process is taken
   * over once stale.
   */
  private serialized<T>(open: OpenTable, write: () => Promise<T>): Promise<T> {
    const run = open.writes.then(async () => {
      const release = await this.lockTable(open.name);
      try {
        // Other processes' commits: a handle that does not check on every read would merge against a stale snapshot.
        if (this.options.readConsistencyIntervalSeconds !== undefined && this.options.readConsistencyIntervalSeconds !== 0) await open.table.checkoutLatest();
        return await write();
      } finally {
        await release().catch((error) => this.onBackgroundError(error, open.name));
      }
    });
    open.writes = run.catch(() => undefined);
    return run;
  }

  /**
   * Takes a table's lock file, waiting while another process holds it (up to LOCK_WAIT_MS, then an error names the
   * table); any other failure (the directory unwritable, ...) is thrown at once instead of retried for ever.
   */
  private async lockTable(name: string): Promise<() => Promise<void>> {
    const dir = join(this.options.dir, '.locks');
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let delay = 2; ; delay = Math.min(100, delay * 1.5)) {
      this.locksDir ??= mkdir(dir, { recursive: true }).then(() => undefined);
      await this.locksDir;
      try {
        return await lock(join(dir, name), {
          realpath: false,
          stale: LOCK_STALE_MS,
          retries: 0,
          // Another process took the lock over because this one stalled past LOCK_STALE_MS: said, not thrown from a timer.
          onCompromised: (error) =>
            this.onBackgroundError(
              new Error(`lost the write lock of LanceDB table ${name} (this process stalled past ${LOCK_STALE_MS / 1000} s): a chunk written meanwhile may be stored twice; \`crs projections verify search-index\` tells (${error.message})`),
              name,
            ),
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') this.locksDir = undefined; // the lock directory was removed: made again
        else if (code !== 'ELOCKED') throw error;
        if (Date.now() > deadline) throw new Error(`LanceDB table ${name}: its write lock has been held by another process for more than ${LOCK_WAIT_MS / 60_000} minutes`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  private scheduleRefresh(open: OpenTable): void {
    if (this.closed || open.refreshTimer || this.refreshDelayMs < 0) return;
    clearTimeout(open.cleanupTimer); // the refresh cleans up, and schedules the next cleanup itself
    open.cleanupTimer = undefined;
    const delay = Math.max(this.refreshDelayMs, open.lastRefreshMs / this.maxMaintenanceShare);
    open.refreshTimer = setTimeout(() => {
      open.refreshTimer = undefined;
      if (this.closed || this.tables.get(open.name) === undefined) return;
      this.refresh(open)
        .then(() => this.scheduleCleanup(open))
        .catch((error) => this.onBackgroundError(error, open.name));
    }, delay);
    open.refreshTimer.unref();
  }

  /** Once the versions an optimize kept have aged past the retention, one more optimize removes them (unless a write's refresh comes first). */
  private scheduleCleanup(open: OpenTable): void {
    if (this.closed || open.refreshTimer || this.versionRetentionMs <= 0) return;
    clearTimeout(open.cleanupTimer);
    open.cleanupTimer = setTimeout(() => {
      open.cleanupTimer = undefined;
      if (this.closed || open.refreshTimer || this.tables.get(open.name) === undefined) return;
      this.refresh(open).catch((error) => this.onBackgroundError(error, open.name));
    }, this.versionRetentionMs + 1000);
    open.cleanupTimer.unref();
  }

  /** Compaction, folding new rows into the FTS (and vector) index, pruning old versions; then the vector index threshold. */
  private refresh(open: OpenTable): Promise<void> {
    return this.serialized(open, async () => {
      // Compaction and index commits change no row: the copy held in the process (if any) answers meanwhile, and then
      // only moves its version.
      const unchanged = this.residents.holds(open.name) ? this.residents.rowsUnchanged(open.name, await open.table.version()) : undefined;
      try {
        await this.maintain(open);
      } finally {
        if (unchanged) unchanged.end(await open.table.version());
      }
    });
  }

  private async maintain(open: OpenTable): Promise<void> {
    const started = Date.now();
    if (open.ftsWithPositions) {
      // Rebuilt over every row (the unindexed ones too); queries read the old one until this commits.
      await open.table.createIndex(FTS_COLUMN, { config: ftsIndex(open.ftsWithPositions), replace: true });
      open.ftsWithPositions = undefined;
    }
    await open.table.optimize({ cleanupOlderThan: new Date(Date.now() - this.versionRetentionMs) });
    if (open.missingScalarIndexes.length) {
      await createScalarIndexes(open.table, open.missingScalarIndexes);
      open.missingScalarIndexes = [];
    }
    await this.ensureVectorIndex(open);
    await this.mergeVectorIndexDeltas(open);
    await this.sweepIndexDirs(open);
    open.lastRefreshMs = Date.now() - started;
  }

  /**
   * Every optimize writes each index anew into a new directory under the table's `_indices`, and LanceDB's cleanup of
   * old versions deletes the files of the superseded copies but not their directories (8 to 16 per optimize): under a
   * trickle of small writes a table gathered 1,680, nearly all empty (7.1 MB of `_indices` beside 1.1 MB of data). This
   * removes those, after the cleanup, in the same serialized step as the optimize (this process's maintenance and
   * writes, and other processes' that hold the table's lock, never run meanwhile). Only directories that are empty
   * (rmdir refuses any other, so a file that appears meanwhile keeps its directory) and unmodified for longer than the
   * version retention: an index directory of a live version always holds the index's files, and one that another
   * process is writing unlocked right now (an index creation on an existing table) was modified moments ago.
   * Local directories only (an object store has no directories). Failures are reported, never thrown.
   */
  private async sweepIndexDirs(open: OpenTable): Promise<void> {
    const tableDir = localTableDir(this.options.dir, open.name);
    if (tableDir === undefined) return;
    await removeEmptyDirs(join(tableDir, '_indices'), Date.now() - Math.max(0, this.versionRetentionMs)).catch((error) =>
      this.onBackgroundError(error, open.name),
    );
  }

  /**
   * Whether the table holds a row, asked (a row count from the manifest: 0.07 ms) only until it first does: a search
   * of an empty table still cost about 3 ms of engine work (2.8 keyword, 3.0 vector), and a database of memories
   * alone has an empty knowledge table that every `type: "all"` query (the default) searched twice. Once a table has
   * shown rows it is searched without asking again.
   */
  private async hasRows(open: OpenTable): Promise<boolean> {
    if (!open.hasRows) open.hasRows = (await open.table.countRows()) > 0;
    return open.hasRows;
  }

  /**
   * LanceDB 0.37 answers a full-text match query from the FTS index plus a flat scan of rows written since the
   * index was last updated, merged and ranked together. While the index covers no row yet, the flat scan's first
   * `limit` matches come back unranked, so rows are folded into the index first (a synchronous optimize, normally
   * done by the background refresh already). (Phrase queries are match queries here: LanceDB's own phrase query
   * skips unindexed rows.)
   */
  private async prepareKeywordIndex(open: OpenTable): Promise<void> {
    if ((open.ftsCoversRowsUntil ?? 0) > Date.now()) return;
    const needsFold = (stats: { numIndexedRows: number; numUnindexedRows: number } | undefined) =>
      stats !== undefined && stats.numUnindexedRows > 0 && stats.numIndexedRows === 0;
    const stats = await open.table.indexStats(FTS_INDEX);
    if (stats !== undefined && stats.numIndexedRows > 0) open.ftsCoversRowsUntil = Date.now() + FTS_STATS_TTL_MS;
    if (!needsFold(stats)) return;
    clearTimeout(open.refreshTimer);
    open.refreshTimer = undefined;
    await this.serialized(open, async () => {
      // Another query may have folded them while this one waited.
      if (!needsFold(await open.table.indexStats(FTS_INDEX))) return;
      const started = Date.now();
      await open.table.optimize({ cleanupOlderThan: new Date(Date.now() - this.versionRetentionMs) });
      open.lastRefreshMs = Date.now() - started;
    }).catch((error) => this.onBackgroundError(error, open.name)); // search anyway: indexed rows still answer
  }

  private async ensureVectorIndex(open: OpenTable): Promise<void> {
    if (open.hasVectorIndex || this.vectorIndexThreshold <= 0) return;
    if ((await open.table.countRows()) < this.vectorIndexThreshold) return;
    if (await hasIndex(open.table, VECTOR_INDEX)) {
      open.hasVectorIndex = true; // built by another process
      return;
    }
    // IVF_FLAT keeps exact vectors (no PQ quantisation); distances stay exact, recall depends on probes.
    await open.table.createIndex('vector', { config: Index.ivfFlat({ distanceType: 'cosine' }) });
    open.hasVectorIndex = true;
  }

  /** Retrains the vector index whole once optimizes have left more than maxVectorIndexDeltas deltas (see the option). */
  private async mergeVectorIndexDeltas(open: OpenTable): Promise<void> {
    if (!open.hasVectorIndex || this.maxVectorIndexDeltas <= 0) return;
    const stats = await open.table.indexStats(VECTOR_INDEX);
    if (!stats || (stats.numIndices ?? 1) <= this.maxVectorIndexDeltas) return;
    // Queries keep reading the version they opened; the retrained index is one commit (replace).
    await open.table.createIndex('vector', { config: Index.ivfFlat({ distanceType: 'cosine' }), replace: true });
  }
}

/** A doc as the table returns it once written: absent fields null, metadata through its JSON, nothing shared with the caller. */
function asStored(doc: ChunkDoc): ChunkDoc {
  return {
    ...doc,
    title: doc.title ?? null,
    principals: doc.principals ? [...doc.principals] : null,
    metadata: JSON.parse(JSON.stringify(doc.metadata)),
    additionalMetadata: JSON.parse(JSON.stringify(doc.additionalMetadata)),
    sourceType: doc.sourceType ?? null,
    expiresAt: doc.expiresAt ?? null,
    vector: Float32Array.from(doc.vector),
  };
}

/** The columns computed from others, in the order they were introduced (the order an older table gets them in). */
const COMPUTED_COLUMNS: [string, string][] = [
  [ACL_COLUMN, ACL_COLUMN_SQL],
  [LEAN_COLUMN, LEAN_COLUMN_SQL],
  [EXPIRY_COLUMN, EXPIRY_COLUMN_SQL],
];

async function addComputedColumns(table: Table): Promise<void> {
  for (const [name, sql] of COMPUTED_COLUMNS) await addComputedColumn(table, name, sql);
}

/**
 * A table written before a column existed (the ACL list, the packed lean fields, the expiry key) gets it, computed from the other
 * columns by `sql`, before any read or write. Idempotent; tolerates another process doing the same.
 */
async function addComputedColumn(table: Table, name: string, sql: string): Promise<void> {
  const has = async () => (await table.schema()).fields.some((f) => f.name === name);
  if (await has()) return;
  try {
    await table.addColumns([{ name, valueSql: sql }]);
  } catch (error) {
    await table.checkoutLatest();
    if (!(await has())) throw error;
  }
}

/** The full-text tokenizer settings an index is made with (English, stop words, lowercase, ASCII folding by default). */
interface FtsTokenizer {
  stem: boolean;
  removeStopWords?: boolean;
  lowercase?: boolean;
  asciiFolding?: boolean;
  language?: string;
  baseTokenizer?: 'simple' | 'whitespace' | 'raw';
  maxTokenLength?: number;
}

/**
 * The full-text index: without word positions, which doubled what folding new rows into it costs (every optimize
 * rewrites it whole: 280-400 ms against 150-200 at 40,000 rows). Phrase queries are checked in process instead
 * (phraseQuery, lancedb-phrase.ts).
 */
function ftsIndex(tokenizer: FtsTokenizer): Index {
  return Index.fts({
    withPosition: false,
    baseTokenizer: tokenizer.baseTokenizer ?? 'simple',
    language: tokenizer.language ?? 'English',
    stem: tokenizer.stem,
    removeStopWords: tokenizer.removeStopWords ?? true,
    lowercase: tokenizer.lowercase ?? true,
    asciiFolding: tokenizer.asciiFolding ?? true,
    ...(tokenizer.maxTokenLength === undefined ? {} : { maxTokenLength: tokenizer.maxTokenLength }),
  });
}

/** The tokenizer of a full-text index made with word positions (to remake it without, alike otherwise); else undefined. */
function ftsTokenizerWithPositions(index: IndexConfig | undefined): FtsTokenizer | undefined {
  const d = index?.indexDetails as Record<string, unknown> | undefined;
  if (!d || d.with_position !== true) return undefined;
  const flag = (key: string) => (typeof d[key] === 'boolean' ? (d[key] as boolean) : undefined);
  const base = d.base_tokenizer;
  return {
    stem: flag('stem') ?? true,
    removeStopWords: flag('remove_stop_words'),
    lowercase: flag('lower_case'),
    asciiFolding: flag('ascii_folding'),
    language: typeof d.language === 'string' ? d.language : undefined,
    baseTokenizer: base === 'simple' || base === 'whitespace' || base === 'raw' ? base : undefined,
    maxTokenLength: typeof d.max_token_length === 'number' ? d.max_token_length : undefined,
  };
}

/** Creates the missing ones among these scalar indexes (idempotent; tolerates a concurrent creator). */
async function createScalarIndexes(table: Table, columns: string[]): Promise<void> {
  const existing = new Set((await table.listIndices()).map((index) => index.name));
  for (const { column, config } of SCALAR_INDEXES) {
    if (!columns.includes(column) || existing.has(scalarIndexName(column))) continue;
    try {
      await table.createIndex(column, { config: config(), replace: false });
    } catch (error) {
      if (!(await hasIndex(table, scalarIndexName(column)))) throw error;
    }
  }
}

/** A table's directory, when the tables live on the local filesystem (a path or a file: URI); undefined for an object store. */
function localTableDir(dir: string, name: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(dir)) {
    if (!/^file:/i.test(dir)) return undefined;
    dir = fileURLToPath(dir);
  }
  return join(dir, `${name}.lance`);
}

/** Removes the empty directories in `parent` last modified before `modifiedBefore` (epoch ms); never a non-empty one. */
async function removeEmptyDirs(parent: string, modifiedBefore: number): Promise<number> {
  let entries;
  try {
    entries = await readdir(parent, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0; // a table without indexes yet
    throw error;
  }
  let removed = 0;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const path = join(parent, entry.name);
    try {
      if ((await stat(path)).mtimeMs >= modifiedBefore) continue;
      await rmdir(path); // not recursive: fails on a directory that holds anything
      removed++;
    } catch (error) {
      // Not empty (the directory of a live index: the common case), or gone meanwhile.
      if (!['ENOTEMPTY', 'EEXIST', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  }
  return removed;
}

async function hasIndex(table: Table, name: string): Promise<boolean> {
  return (await table.listIndices()).some((index) => index.name === name);
}

/** mergeInsert's behaviour with two source rows for one key is undefined: keep the newest (last on ties). */
function newestPerChunk(docs: ChunkDoc[]): ChunkDoc[] {
  const newest = new Map<string, ChunkDoc>();
  for (const doc of docs) {
    const seen = newest.get(doc.chunkId);
    if (!seen || seen.version <= doc.version) newest.set(doc.chunkId, doc);
  }
  return [...newest.values()];
}

function assertDimensions(vector: Float32Array | number[], open: OpenTable): void {
  if (vector.length !== open.dimensions) {
    throw new SearchIndexError(
      'dimension_mismatch',
      `query vector has ${vector.length} dimensions, search index ${open.name} has ${open.dimensions}`,
    );
  }
}
