import {
  Bool,
  type Data,
  type DataType,
  Field,
  FixedSizeList,
  Float32,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table as ArrowTable,
  Utf8,
  type Vector,
  vectorFromArray,
} from 'apache-arrow';
import { chunkFilterTokens } from './metadata-filter-tokens';
import { type Candidate, type ChunkDoc, type ChunkVector, ID_SEPARATOR, type LeanCandidate, type LeanDoc, SearchIndexError, type Store } from './search-index.port';

/**
 * The LanceDB table layout of chunks, and the conversions between ChunkDoc and Arrow.
 * Writes are built column by column: about six times faster than LanceDB's row-wise makeArrowTable.
 */

/** Title and text in one column, so `and` and `phrase` apply to the chunk as a whole with one FTS index. */
export const FTS_COLUMN = 'fts_text';

/**
 * The ACL as an always-present list, for one indexable filter clause: the principals, or UNRESTRICTED for a chunk
 * without ACL (principals null). `principals IS NULL OR array_has_any(principals, ...)` cannot use an index.
 */
export const ACL_COLUMN = 'acl';
/** Stands for "no ACL" in ACL_COLUMN; not a valid principal (the API rejects it), so no caller can hold it. */
export const UNRESTRICTED = '__unrestricted__';
/** How ACL_COLUMN is computed from `principals` (also for tables written before the column existed). */
export const ACL_COLUMN_SQL = `coalesce(principals, make_array('${UNRESTRICTED}'))`;

/** Every column but the vector and the FTS copy: what a search candidate carries. */
export const DOC_COLUMNS = [
  'chunk_id',
  'item_id',
  'store',
  'collection',
  'title',
  'text',
  'principals',
  'metadata_json',
  'additional_metadata_json',
  'source_type',
  'is_app',
  'created_at',
  'updated_at',
  'expires_at',
  'version',
];

/** What FTS_COLUMN holds for a chunk. */
export function ftsText(doc: Pick<ChunkDoc, 'title' | 'text'>): string {
  return doc.title ? `${doc.title}\n${doc.text}` : doc.text;
}

export function chunkTableSchema(dimensions: number): Schema {
  return new Schema([
    new Field('chunk_id', new Utf8(), false),
    new Field('item_id', new Utf8(), false),
    new Field('store', new Utf8(), false),
    new Field('collection', new Utf8(), false),
    new Field('title', new Utf8(), true),
    new Field('text', new Utf8(), false),
    new Field(FTS_COLUMN, new Utf8(), false),
    new Field('vector', new FixedSizeList(dimensions, new Field('item', new Float32(), true)), false),
    new Field('principals', new List(new Field('item', new Utf8(), true)), true),
    // JSON for an exact round-trip of metadata...
    new Field('metadata_json', new Utf8(), false),
    new Field('additional_metadata_json', new Utf8(), false),
    // ...and `m:<key>=<json>` / `a:<key>=<json>` tokens to filter on arbitrary keys without schema changes.
    new Field('filter_kv', new List(new Field('item', new Utf8(), true)), false),
    new Field('source_type', new Utf8(), true),
    new Field('is_app', new Bool(), false),
    new Field('created_at', new Int64(), false),
    new Field('updated_at', new Int64(), false),
    new Field('expires_at', new Int64(), true),
    new Field('version', new Int64(), false),
    // Last, where adding them to an older table puts them (ACL first: it was added first).
    new Field(ACL_COLUMN, new List(new Field('item', new Utf8(), true)), false),
    new Field(LEAN_COLUMN, new Utf8(), false),
    new Field(EXPIRY_COLUMN, new Int64(), false),
  ]);
}

/**
 * A search candidate's fields (chunk id, item id, version, text) packed in one column: the engine reads one column per
 * hit instead of four. At 100k chunks that took the four calls of a `fast all +acl +metadata` query from 29-30 to
 * 22.5-24 ms of CPU (p50 17.6-18.1 -> 14.2-15.0 ms; docs/retrieval.md). The text is stored twice (here and in `text`).
 */
export const LEAN_COLUMN = 'lean';
/** Separates the packed fields; chunk and item ids may not contain it (the text may: it is the last field). */
export const LEAN_SEPARATOR = ID_SEPARATOR;
/** How LEAN_COLUMN is computed from the other columns (also for tables written before it existed). */
export const LEAN_COLUMN_SQL = "concat(chunk_id, chr(31), item_id, chr(31), CAST(version AS VARCHAR), chr(31), text)";

/**
 * The expiry as an always-present number, for one indexable range clause: `expires_at`, or NEVER_EXPIRES for a chunk
 * that does not expire. `expires_at IS NULL OR expires_at > now` costs LanceDB two index lookups and a union on every
 * search; `expires_key > now` is one btree range: 0.4-0.5 ms less per engine call at 100k chunks (docs/retrieval.md).
 */
export const EXPIRY_COLUMN = 'expires_key';
/** Stands for "never" in EXPIRY_COLUMN: later than any epoch-ms time a filter can ask about. */
export const NEVER_EXPIRES = Number.MAX_SAFE_INTEGER;
/** How EXPIRY_COLUMN is computed from `expires_at` (also for tables written before it existed). */
export const EXPIRY_COLUMN_SQL = `coalesce(expires_at, CAST(${NEVER_EXPIRES} AS BIGINT))`;

export function packLean(doc: Pick<ChunkDoc, 'chunkId' | 'itemId' | 'version' | 'text'>): string {
  return `${doc.chunkId}${LEAN_SEPARATOR}${doc.itemId}${LEAN_SEPARATOR}${doc.version}${LEAN_SEPARATOR}${doc.text}`;
}

export function unpackLean(packed: string): LeanDoc {
  const a = packed.indexOf(LEAN_SEPARATOR);
  const b = packed.indexOf(LEAN_SEPARATOR, a + 1);
  const c = packed.indexOf(LEAN_SEPARATOR, b + 1);
  if (a < 0 || b < 0 || c < 0) throw new Error('malformed lean column value');
  return { chunkId: packed.slice(0, a), itemId: packed.slice(a + 1, b), version: Number(packed.slice(b + 1, c)), text: packed.slice(c + 1) };
}

export function vectorDimensions(schema: Schema): number {
  const type = schema.fields.find((f) => f.name === 'vector')?.type;
  if (!(type instanceof FixedSizeList)) throw new Error('search index table has no fixed-size vector column');
  return type.listSize;
}

/** One record batch of chunks, in the column order of chunkTableSchema(dimensions). */
export function chunksToArrow(docs: ChunkDoc[], dimensions: number): ArrowTable {
  const schema = chunkTableSchema(dimensions);
  const vectors = new Float32Array(docs.length * dimensions);
  docs.forEach((doc, i) => {
    if (doc.vector.length !== dimensions) {
      throw new SearchIndexError(
        'dimension_mismatch',
        `chunk ${doc.chunkId} has a ${doc.vector.length}-dimensional vector, the index has ${dimensions}`,
      );
    }
    vectors.set(doc.vector, i * dimensions);
  });
  const column = (type: DataType, values: unknown[]): Data => vectorFromArray(values, type).data[0];
  const utf8 = (type: DataType, values: (string | null)[]) => utf8Data(type as Utf8, values);
  const int64 = (type: DataType, values: (number | null)[], what: string) => int64Data(type as Int64, values.map((v) => (v === null ? null : integer(v, what))));
  const byName: Record<string, (type: DataType) => Data> = {
    chunk_id: (t) => utf8(t, docs.map((d) => d.chunkId)),
    item_id: (t) => utf8(t, docs.map((d) => d.itemId)),
    store: (t) => utf8(t, docs.map((d) => d.store)),
    collection: (t) => utf8(t, docs.map((d) => d.collection)),
    title: (t) => utf8(t, docs.map((d) => d.title)),
    text: (t) => utf8(t, docs.map((d) => d.text)),
    [FTS_COLUMN]: (t) => utf8(t, docs.map(ftsText)),
    vector: (t) =>
      makeData({
        type: t as FixedSizeList<Float32>,
        length: docs.length,
        nullCount: 0,
        child: makeData({ type: new Float32(), length: vectors.length, data: vectors }),
      }),
    principals: (t) => utf8ListData(t as List<Utf8>, docs.map((d) => d.principals)),
    [ACL_COLUMN]: (t) => utf8ListData(t as List<Utf8>, docs.map((d) => d.principals ?? [UNRESTRICTED])),
    metadata_json: (t) => utf8(t, docs.map((d) => JSON.stringify(d.metadata))),
    additional_metadata_json: (t) => utf8(t, docs.map((d) => JSON.stringify(d.additionalMetadata))),
    filter_kv: (t) => utf8ListData(t as List<Utf8>, docs.map(chunkFilterTokens)),
    source_type: (t) => utf8(t, docs.map((d) => d.sourceType)),
    is_app: (t) => column(t, docs.map((d) => d.isApp)),
    created_at: (t) => int64(t, docs.map((d) => d.createdAt), 'createdAt'),
    updated_at: (t) => int64(t, docs.map((d) => d.updatedAt), 'updatedAt'),
    expires_at: (t) => int64(t, docs.map((d) => d.expiresAt), 'expiresAt'),
    version: (t) => int64(t, docs.map((d) => d.version), 'version'),
    [LEAN_COLUMN]: (t) => utf8(t, docs.map(packLean)),
    [EXPIRY_COLUMN]: (t) => int64(t, docs.map((d) => d.expiresAt ?? NEVER_EXPIRES), 'expiresAt'),
  };
  const children = schema.fields.map((field) => byName[field.name](field.type));
  const batch = new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: docs.length, nullCount: 0, children }),
  );
  return new ArrowTable([batch]);
}

/** The columns a lean search reads. */
export const LEAN_COLUMNS = [LEAN_COLUMN];

export function toLeanCandidates(result: ArrowTable, score: (row: number) => number): LeanCandidate[] {
  if (result.numRows === 0) return [];
  const packed = column(result, LEAN_COLUMN);
  const out: LeanCandidate[] = [];
  for (let i = 0; i < result.numRows; i++) {
    const doc = unpackLean(packed.get(i));
    out.push({ chunkId: doc.chunkId, itemId: doc.itemId, score: score(i), doc });
  }
  return out;
}

export function toCandidates(result: ArrowTable, score: (row: number) => number): Candidate[] {
  return docsWithoutVector(result).map((doc, i) => ({ chunkId: doc.chunkId, itemId: doc.itemId, score: score(i), doc }));
}

export function toChunkDocs(result: ArrowTable): ChunkDoc[] {
  if (result.numRows === 0) return [];
  const vectors = column(result, 'vector');
  return docsWithoutVector(result).map((doc, i) => {
    // Copy: a row's values are a view into the whole batch's buffer.
    const vector = Float32Array.from((vectors.get(i) as Vector<Float32>).toArray());
    return { ...doc, vector };
  });
}

/** Rows read with only `chunk_id` and `vector`. */
export function toChunkVectors(result: ArrowTable): ChunkVector[] {
  if (result.numRows === 0) return [];
  const ids = column(result, 'chunk_id');
  const vectors = column(result, 'vector');
  const out: ChunkVector[] = [];
  for (let i = 0; i < result.numRows; i++) out.push({ chunkId: ids.get(i), vector: Float32Array.from((vectors.get(i) as Vector<Float32>).toArray()) });
  return out;
}

function docsWithoutVector(result: ArrowTable): Omit<ChunkDoc, 'vector'>[] {
  if (result.numRows === 0) return []; // an empty result may come back without columns
  const c = Object.fromEntries(DOC_COLUMNS.map((name) => [name, column(result, name)]));
  const docs: Omit<ChunkDoc, 'vector'>[] = [];
  for (let i = 0; i < result.numRows; i++) {
    const principals = c.principals.get(i) as Vector | null;
    const expiresAt = c.expires_at.get(i) as bigint | null;
    docs.push({
      chunkId: c.chunk_id.get(i),
      itemId: c.item_id.get(i),
      store: c.store.get(i) as Store,
      collection: c.collection.get(i),
      title: c.title.get(i) ?? null,
      text: c.text.get(i),
      principals: principals === null ? null : (principals.toArray() as string[]),
      metadata: JSON.parse(c.metadata_json.get(i)),
      additionalMetadata: JSON.parse(c.additional_metadata_json.get(i)),
      sourceType: c.source_type.get(i) ?? null,
      isApp: Boolean(c.is_app.get(i)),
      createdAt: Number(c.created_at.get(i)),
      updatedAt: Number(c.updated_at.get(i)),
      expiresAt: expiresAt === null ? null : Number(expiresAt),
      version: Number(c.version.get(i)),
    });
  }
  return docs;
}

function column(result: ArrowTable, name: string): Vector {
  const child = result.getChild(name);
  if (!child) throw new Error(`LanceDB result has no column ${name}`);
  return child;
}

/**
 * A Utf8 column built in one pass over its values (one buffer, its offsets, the validity bitmap when any is null):
 * 2-3 times faster than apache-arrow's builder (`vectorFromArray`), which took most of a large upsert's JavaScript.
 * Null and undefined are both null, as the builder has them.
 */
function utf8Data(type: Utf8, values: (string | null)[]): Data<Utf8> {
  const length = values.length;
  const valueOffsets = new Int32Array(length + 1);
  let bytes = 0;
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (v === null || v === undefined) nullCount++;
    else bytes += Buffer.byteLength(v, 'utf8');
    valueOffsets[i + 1] = bytes;
  }
  const data = new Uint8Array(bytes);
  const writer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const nullBitmap = nullCount ? new Uint8Array((length + 7) >> 3) : undefined;
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    writer.write(v, valueOffsets[i], 'utf8');
    if (nullBitmap) nullBitmap[i >> 3] |= 1 << (i & 7);
  }
  return makeData({ type, length, nullCount, nullBitmap, valueOffsets, data });
}

/** A List<Utf8> column (null where absent), its strings one Utf8 child as in utf8Data. */
function utf8ListData(type: List<Utf8>, values: (string[] | null)[]): Data<List<Utf8>> {
  const length = values.length;
  const valueOffsets = new Int32Array(length + 1);
  const strings: string[] = [];
  let nullCount = 0;
  const nullBitmap = values.some((v) => v === null || v === undefined) ? new Uint8Array((length + 7) >> 3) : undefined;
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (v === null || v === undefined) nullCount++;
    else {
      for (const s of v) strings.push(s);
      if (nullBitmap) nullBitmap[i >> 3] |= 1 << (i & 7);
    }
    valueOffsets[i + 1] = strings.length;
  }
  const child = utf8Data(type.children[0].type as Utf8, strings);
  return makeData({ type, length, nullCount, nullBitmap, valueOffsets, child });
}

/** An Int64 column from safe integers (null where absent), built directly as in utf8Data. */
function int64Data(type: Int64, values: (number | null)[]): Data<Int64> {
  const length = values.length;
  const data = new BigInt64Array(length);
  let nullCount = 0;
  const nullBitmap = values.some((v) => v === null || v === undefined) ? new Uint8Array((length + 7) >> 3) : undefined;
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      nullCount++;
      continue;
    }
    data[i] = BigInt(v);
    if (nullBitmap) nullBitmap[i >> 3] |= 1 << (i & 7);
  }
  return makeData({ type, length, nullCount, nullBitmap, data });
}

function integer(value: number, what: string): number {
  if (!Number.isSafeInteger(value)) throw new SearchIndexError('invalid_argument', `${what} must be an integer, got ${value}`);
  return value;
}
