import { NEVER_EXPIRES, UNRESTRICTED } from './lancedb-chunk-table';
import { chunkFilterTokens, filterTokenGroups } from './metadata-filter-tokens';
import { type Candidate, type ChunkDoc, type LeanCandidate, PUBLIC_PRINCIPAL, type SearchFilter } from './search-index.port';

/**
 * A small table's rows held in the process, so its searches need no engine call.
 *
 * Every LanceDB search costs about 4 ms of engine work whatever the table's size (600 rows scanned whole: 4.1 ms; a
 * vector or full-text search over them: 4.0 ms), and a query makes two or four of them: on a conversation-sized
 * database that fixed cost was most of a query. Here a table of at most a few thousand rows is answered from a copy:
 * BM25 over the tokens the table's own full-text tokenizer made (the same stop words, stemming and folding), scored as
 * LanceDB scores (k1 1.2, b 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)), a document's length its token count, every
 * occurrence of a term in the query counted), and exact cosine similarity, with the filters applied first as LanceDB's
 * prefilter does. The copy is kept in step with the table's version (ResidentTables).
 */

const K1 = 1.2;
const B = 0.75;

/** One row: its document, its vector and what BM25 needs of its tokens. */
interface ResidentRow {
  doc: Omit<ChunkDoc, 'vector'>;
  vector: Float32Array;
  norm: number;
  /** Its distinct terms (their occurrences are in the postings). */
  terms: string[];
  /** Tokens in the row (its BM25 length). */
  length: number;
  acl: string[];
  filterTokens: Set<string>;
  expiresKey: number;
  bytes: number;
}

/** What a row is made from: the stored document with its vector, and its full-text column's tokens. */
export interface ResidentInput {
  doc: ChunkDoc;
  tokens: string[];
}

/** A filter compiled once per search. */
type RowFilter = (row: ResidentRow) => boolean;

export class ResidentTable {
  private readonly rows = new Map<string, ResidentRow>();
  /** Term -> the rows holding it, with their occurrences. */
  private readonly postings = new Map<string, Map<ResidentRow, number>>();
  private totalLength = 0;
  private byteCount = 0;

  get size(): number {
    return this.rows.size;
  }

  get bytes(): number {
    return this.byteCount;
  }

  /** The row's document with a copy of its vector. */
  chunk(chunkId: string): ChunkDoc | undefined {
    const row = this.rows.get(chunkId);
    return row && { ...row.doc, vector: Float32Array.from(row.vector) };
  }

  /** A copy of the row's vector. */
  vectorOf(chunkId: string): Float32Array | undefined {
    const row = this.rows.get(chunkId);
    return row && Float32Array.from(row.vector);
  }

  /** chunk id -> version of every row held. */
  versions(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, row] of this.rows) out.set(id, row.doc.version);
    return out;
  }

  put(input: ResidentInput): void {
    this.remove(input.doc.chunkId);
    const { vector, ...doc } = input.doc;
    const terms = new Map<string, number>();
    for (const token of input.tokens) terms.set(token, (terms.get(token) ?? 0) + 1);
    const copy = Float32Array.from(vector);
    let norm = 0;
    for (let i = 0; i < copy.length; i++) norm += copy[i] * copy[i];
    const filterTokens = new Set(chunkFilterTokens(doc));
    const row: ResidentRow = {
      doc,
      vector: copy,
      norm: Math.sqrt(norm),
      terms: [...terms.keys()],
      length: input.tokens.length,
      acl: doc.principals ?? [UNRESTRICTED],
      filterTokens,
      expiresKey: doc.expiresAt ?? NEVER_EXPIRES,
      bytes: estimateBytes(doc, copy, terms),
    };
    this.rows.set(doc.chunkId, row);
    for (const [term, count] of terms) {
      let holders = this.postings.get(term);
      if (!holders) this.postings.set(term, (holders = new Map()));
      holders.set(row, count);
    }
    this.totalLength += row.length;
    this.byteCount += row.bytes;
  }

  /** As the engine's upsert: the row replaces the one held unless that one has a higher version. */
  putUnlessOlder(input: ResidentInput): void {
    const held = this.rows.get(input.doc.chunkId);
    if (held && held.doc.version > input.doc.version) return;
    this.put(input);
  }

  /** Removes every row whose document matches. */
  removeWhere(matches: (doc: Omit<ChunkDoc, 'vector'>) => boolean): void {
    for (const [id, row] of [...this.rows]) if (matches(row.doc)) this.remove(id);
  }

  remove(chunkId: string): void {
    const row = this.rows.get(chunkId);
    if (!row) return;
    this.rows.delete(chunkId);
    for (const term of row.terms) {
      const holders = this.postings.get(term)!;
      holders.delete(row);
      if (holders.size === 0) this.postings.delete(term);
    }
    this.totalLength -= row.length;
    this.byteCount -= row.bytes;
  }

  /**
   * BM25 over the query's tokens (as the table's tokenizer made them), best first. `and`: only rows holding every
   * distinct term. Statistics are the whole table's, whatever the filter keeps.
   */
  keyword(queryTokens: string[], operator: 'or' | 'and', limit: number, filter: SearchFilter | undefined): Candidate[] {
    if (limit <= 0 || queryTokens.length === 0 || this.rows.size === 0) return [];
    const weights = new Map<string, number>();
    for (const token of queryTokens) weights.set(token, (weights.get(token) ?? 0) + 1);
    if (operator === 'and' && [...weights.keys()].some((term) => !this.postings.has(term))) return [];
    const keep = compileFilter(filter);
    const n = this.rows.size;
    const averageLength = this.totalLength / n;
    const scores = new Map<ResidentRow, number>();
    const matched = new Map<ResidentRow, number>();
    for (const [term, weight] of weights) {
      const holders = this.postings.get(term);
      if (!holders) continue;
      const idf = Math.log(1 + (n - holders.size + 0.5) / (holders.size + 0.5));
      for (const [row, tf] of holders) {
        if (!keep(row)) continue;
        const norm = tf + K1 * (1 - B + (B * row.length) / averageLength);
        scores.set(row, (scores.get(row) ?? 0) + (weight * idf * tf * (K1 + 1)) / norm);
        matched.set(row, (matched.get(row) ?? 0) + 1);
      }
    }
    const best = new Best(limit);
    for (const [row, score] of scores) if (operator === 'or' || matched.get(row) === weights.size) best.offer(row, score);
    return best.candidates();
  }

  /** Cosine similarity (1 - cosine distance), nearest first, over the rows the filter keeps (zero vectors left out). */
  vector(query: Float32Array | number[], limit: number, filter: SearchFilter | undefined): Candidate[] {
    if (limit <= 0 || this.rows.size === 0) return [];
    let queryNorm = 0;
    for (let i = 0; i < query.length; i++) queryNorm += query[i] * query[i];
    queryNorm = Math.sqrt(queryNorm);
    // A zero vector has no cosine with anything: LanceDB leaves such rows out (and answers nothing to a zero query).
    if (queryNorm === 0) return [];
    const keep = compileFilter(filter);
    const q = Float32Array.from(query);
    const best = new Best(limit);
    for (const row of this.rows.values()) {
      if (row.norm === 0 || !keep(row)) continue;
      best.offer(row, dot(row.vector, q) / (queryNorm * row.norm));
    }
    return best.candidates();
  }
}

/** a · b over a's length, four products per step: 600 rows of 100 dimensions in 0.14 ms instead of 0.23. */
function dot(a: Float32Array, b: Float32Array): number {
  const n = a.length;
  const end = n - (n % 4);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < end; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (let i = end; i < n; i++) s0 += a[i] * b[i];
  return s0 + s1 + s2 + s3;
}

/** The `limit` best rows offered, kept sorted as they come (most rows fall below the worst kept one and cost a comparison). */
class Best {
  private readonly rows: ResidentRow[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly limit: number) {}

  offer(row: ResidentRow, score: number): void {
    const n = this.scores.length;
    if (n === this.limit && !(score > this.scores[n - 1])) return;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.scores[mid] >= score) lo = mid + 1;
      else hi = mid;
    }
    this.scores.splice(lo, 0, score);
    this.rows.splice(lo, 0, row);
    if (this.scores.length > this.limit) {
      this.scores.pop();
      this.rows.pop();
    }
  }

  candidates(): Candidate[] {
    return this.rows.map((row, i) => ({ chunkId: row.doc.chunkId, itemId: row.doc.itemId, score: this.scores[i], doc: row.doc }));
  }
}

/** The lean form of a candidate (LeanDoc), as the engine's lean search returns it. */
export function leanCandidate(hit: Candidate): LeanCandidate {
  const { chunkId, itemId, text, version } = hit.doc;
  return { chunkId: hit.chunkId, itemId: hit.itemId, score: hit.score, doc: { chunkId, itemId, text, version } };
}

/** The SearchFilter semantics of lanceWhere (lancedb-where.ts), on a held row. */
function compileFilter(filter: SearchFilter | undefined): RowFilter {
  if (!filter) return () => true;
  const checks: RowFilter[] = [];
  const among = (values: readonly string[] | undefined, get: (row: ResidentRow) => string) => {
    if (values === undefined) return;
    const set = new Set(values);
    checks.push((row) => set.has(get(row)));
  };
  among(filter.stores, (row) => row.doc.store);
  among(filter.collections, (row) => row.doc.collection);
  among(filter.itemIds, (row) => row.doc.itemId);
  const now = filter.now;
  if (now !== undefined) checks.push((row) => row.expiresKey > Math.floor(now));
  if (filter.includeApps === false) checks.push((row) => !row.doc.isApp);
  if (filter.principalsAny) {
    const held = new Set([UNRESTRICTED, PUBLIC_PRINCIPAL, ...filter.principalsAny]);
    checks.push((row) => row.acl.some((p) => held.has(p)));
  }
  for (const group of [...filterTokenGroups('m', filter.metadata), ...filterTokenGroups('a', filter.additionalMetadata)]) {
    checks.push((row) => group.some((token) => row.filterTokens.has(token)));
  }
  return (row) => checks.every((check) => check(row));
}

/** Roughly what a row holds in the heap: its strings (two bytes a character), vector, term map and the rest. */
function estimateBytes(doc: Omit<ChunkDoc, 'vector'>, vector: Float32Array, terms: Map<string, number>): number {
  let chars = doc.chunkId.length + doc.itemId.length + doc.collection.length + doc.text.length + (doc.title?.length ?? 0);
  for (const p of doc.principals ?? []) chars += p.length;
  chars += JSON.stringify(doc.metadata).length + JSON.stringify(doc.additionalMetadata).length;
  let termBytes = 0;
  for (const term of terms.keys()) termBytes += 2 * term.length + 120; // the row's map entry and the posting's
  return 400 + 2 * chars + 4 * vector.length + termBytes;
}

/** Where a table's rows come from: the engine, asked only when its version has moved. */
export interface ResidentSource {
  /** The table's version now (LanceDB's, which moves with every commit). */
  version(): Promise<number>;
  countRows(): Promise<number>;
  /** chunk id -> version of every row. */
  heldVersions(): Promise<Map<string, number>>;
  /** These rows (every row when ids is undefined), with their full-text column's tokens. */
  fetch(ids: string[] | undefined): Promise<ResidentInput[]>;
}

interface Entry {
  /** The engine's table version this copy holds (read before its rows: the rows are at least that new). */
  version: number;
  /** undefined: the table had more rows than maxRows at that version. */
  table?: ResidentTable;
  /** The copy's bytes when stored, as counted in the total (a sync updates the copy in place before storing it again). */
  bytes?: number;
  /** When (epoch ms) the table was found too large: for LARGE_TABLE_RECHECK_MS its searches go to the engine unasked. */
  foundLargeAt?: number;
  /** The row count at which the table's copy outgrew maxBytes: not fetched again until it holds fewer rows. */
  tooManyBytesAtRows?: number;
}

/**
 * How long a table found past maxRows is left to the engine without reading its version again: a large table's
 * searches skip that call (0.1 ms each), and one that shrank below maxRows gets a copy this much later.
 */
const LARGE_TABLE_RECHECK_MS = 1000;

/**
 * The copies of small tables, one per table name, least recently used dropped first past `maxBytes`. A search reads
 * the table's version (0.1 ms); when it moved, the copy reads every row's chunk id and version and fetches only the
 * rows that are new or changed, and drops the ones gone, before answering: a search never sees less than what was
 * committed before it began. A table past `maxRows`, or larger than `maxBytes` alone, is searched by the engine.
 */
export class ResidentTables {
  private readonly entries = new Map<string, Entry>();
  private readonly syncing = new Map<string, { version: number; done: Promise<Entry> }>();
  /** Tables under maintenance that changes no row (compaction, index commits), by the version it started from. */
  private readonly rowsUnchangedSince = new Map<string, number>();
  private bytes = 0;

  constructor(
    private readonly maxRows: number,
    private readonly maxBytes: number,
  ) {}

  get enabled(): boolean {
    return this.maxRows > 0 && this.maxBytes > 0;
  }

  usage(): { bytes: number; entries: number } {
    let entries = 0;
    for (const entry of this.entries.values()) if (entry.table) entries++;
    return { bytes: this.bytes, entries };
  }

  /** The up-to-date copy of the table, or undefined when the engine should answer. */
  async get(name: string, source: ResidentSource): Promise<ResidentTable | undefined> {
    if (!this.enabled) return undefined;
    const large = this.entries.get(name)?.foundLargeAt;
    if (large !== undefined && Date.now() - large < LARGE_TABLE_RECHECK_MS) return undefined;
    const version = await source.version();
    const entry = this.entries.get(name);
    if (entry && entry.foundLargeAt === undefined && (entry.version === version || this.rowsUnchangedSince.get(name) === entry.version)) {
      // The same version, or versions that only this process's maintenance committed since (its rows are the same).
      this.touch(name, entry);
      return entry.table;
    }
    const pending = this.syncing.get(name);
    if (pending && pending.version === version) return (await pending.done).table;
    const done = (pending?.done.catch(() => undefined) ?? Promise.resolve()).then(() => this.sync(name, version, source));
    this.syncing.set(name, { version, done });
    try {
      return (await done).table;
    } finally {
      if (this.syncing.get(name)?.done === done) this.syncing.delete(name);
    }
  }

  /** Whether a copy of the table is held (a write then reads the table's version around its commit, for apply). */
  holds(name: string): boolean {
    return this.entries.get(name)?.table !== undefined;
  }

  /**
   * A commit this process made under the table's lock, from version `before` to `after` (nothing else can commit in
   * between): when the copy holds exactly `before` and no sync is under way, the write's effect is applied to it, so the
   * next search needs no read of the table. Otherwise the next search brings the copy up to date from the table.
   */
  apply(name: string, before: number, after: number, change: (table: ResidentTable) => void): void {
    const entry = this.entries.get(name);
    if (!entry?.table || entry.version !== before || this.syncing.has(name)) return;
    change(entry.table);
    this.settle(name, after, entry.table);
  }

  /**
   * Maintenance this process runs under the table's lock, committing versions that change no row, from `before` on:
   * meanwhile a copy holding `before` still answers. `end` is given the version after it.
   */
  rowsUnchanged(name: string, before: number): { end(after: number): void } {
    this.rowsUnchangedSince.set(name, before);
    return {
      end: (after) => {
        if (this.rowsUnchangedSince.get(name) === before) this.rowsUnchangedSince.delete(name);
        this.apply(name, before, after, () => undefined);
      },
    };
  }

  /** Forgets a table (dropped, or closed). */
  forget(name: string): void {
    this.bytes -= this.entries.get(name)?.bytes ?? 0;
    this.entries.delete(name);
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private async sync(name: string, version: number, source: ResidentSource): Promise<Entry> {
    const current = this.entries.get(name);
    if (current && current.version === version && current.foundLargeAt === undefined) return current;
    const rows = await source.countRows();
    const tooManyBytesAtRows = current?.tooManyBytesAtRows;
    if (rows > this.maxRows || (tooManyBytesAtRows !== undefined && rows >= tooManyBytesAtRows)) {
      return this.store(name, { version, foundLargeAt: Date.now(), tooManyBytesAtRows });
    }
    let table = current?.table;
    if (!table) {
      table = new ResidentTable();
      for (const input of await source.fetch(undefined)) table.put(input);
    } else {
      const held = await source.heldVersions();
      const known = table.versions();
      for (const id of known.keys()) if (!held.has(id)) table.remove(id);
      const changed = [...held].flatMap(([id, v]) => (known.get(id) === v ? [] : [id]));
      if (changed.length) for (const input of await source.fetch(changed)) table.put(input);
    }
    return this.settle(name, version, table);
  }

  /** Stores the copy at that version, unless it has grown past maxRows or maxBytes (the engine answers then). */
  private settle(name: string, version: number, table: ResidentTable): Entry {
    if (table.size > this.maxRows) return this.store(name, { version, foundLargeAt: Date.now() });
    if (table.bytes > this.maxBytes) return this.store(name, { version, foundLargeAt: Date.now(), tooManyBytesAtRows: table.size });
    return this.store(name, { version, table });
  }

  private store(name: string, entry: Entry): Entry {
    this.forget(name);
    this.entries.set(name, entry);
    if (entry.table) {
      entry.bytes = entry.table.bytes;
      this.bytes += entry.bytes;
      // Least recently used first: Map order is insertion order, and touch() re-inserts.
      for (const other of this.entries.keys()) {
        if (this.bytes <= this.maxBytes) break;
        if (other !== name) this.forget(other);
      }
    }
    return entry;
  }

  private touch(name: string, entry: Entry): void {
    this.entries.delete(name);
    this.entries.set(name, entry);
  }
}
