import {
  BaseConnection,
  Client,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
} from '@elastic/elasticsearch';
import { ElasticsearchSearchIndex } from './elasticsearch-search-index';
import type { ChunkDoc } from './search-index.port';

/**
 * The wire requests of the Elasticsearch adapter, checked against a recording connection
 * (the behaviour against a real server is the contract suite, test/integration/search-index.elasticsearch.int.ts).
 */
interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  body: any;
}
type Reply = { status?: number; body?: unknown };

let recorded: Recorded[] = [];
let reply: (req: Recorded) => Reply = () => ({ body: {} });

class RecordingConnection extends BaseConnection {
  // The adapter never asks for streams; `any` satisfies both of the base class's overloads.
  async request(params: ConnectionRequestParams, _options?: unknown): Promise<any> {
    const raw = typeof params.body === 'string' ? params.body : params.body ? params.body.toString() : '';
    const body =
      raw === ''
        ? undefined
        : params.path.endsWith('/_bulk')
          ? raw.trim().split('\n').map((line: string) => JSON.parse(line))
          : JSON.parse(raw);
    const req = { method: params.method, path: params.path, query: new URLSearchParams(params.querystring ?? ''), body };
    recorded.push(req);
    const { status = 200, body: out = {} } = reply(req);
    const response: ConnectionRequestResponse = {
      statusCode: status,
      body: params.method === 'HEAD' ? '' : JSON.stringify(out),
      headers: { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' },
    };
    return response;
  }
}

function adapter(): ElasticsearchSearchIndex {
  const client = new Client({ node: 'http://es.invalid:9200', Connection: RecordingConnection, maxRetries: 0 });
  return new ElasticsearchSearchIndex({ client });
}

function doc(overrides: Partial<ChunkDoc> = {}): ChunkDoc {
  return {
    chunkId: 'c1',
    itemId: 'i1',
    store: 'knowledge',
    collection: 'col',
    title: 'T',
    text: 'body',
    vector: new Float32Array([0.1, -2.5, 3e-8]),
    principals: [],
    metadata: { lang: 'en' },
    additionalMetadata: { connector_id: 'gh' },
    sourceType: 'file',
    isApp: false,
    createdAt: 1,
    updatedAt: 2,
    expiresAt: null,
    version: 7,
    ...overrides,
  };
}

function source(d: ChunkDoc): Record<string, unknown> {
  const buf = Buffer.alloc(d.vector.length * 4);
  Array.from(d.vector).forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return {
    chunk_id: d.chunkId,
    item_id: d.itemId,
    store: d.store,
    collection: d.collection,
    title: d.title,
    text: d.text,
    vector_f32: buf.toString('base64'),
    principals: d.principals,
    acl_restricted: d.principals !== null,
    metadata: d.metadata,
    additional_metadata: d.additionalMetadata,
    filter_kv: [],
    source_type: d.sourceType,
    is_app: d.isApp,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    expires_at: d.expiresAt,
    version: d.version,
  };
}

beforeEach(() => {
  recorded = [];
  reply = () => ({ body: {} });
});

describe('ElasticsearchSearchIndex requests', () => {
  it('creates a concrete index behind an alias, with the chunk mapping', async () => {
    reply = (req) => (req.method === 'HEAD' ? { status: 404 } : { body: { acknowledged: true } });
    await adapter().createIndex('db_1_g1', { dimensions: 3 });
    expect(recorded.map((r) => `${r.method} ${r.path}`)).toEqual(['HEAD /db_1_g1', 'PUT /db_1_g1-crs']);
    const body = recorded[1].body;
    expect(body.aliases).toEqual({ db_1_g1: {} });
    expect(body.mappings.dynamic).toBe('strict');
    expect(body.mappings.properties.vector).toEqual({
      type: 'dense_vector',
      dims: 3,
      index: true,
      similarity: 'cosine',
      index_options: { type: 'hnsw' },
    });
    expect(body.mappings.properties.text).toEqual({ type: 'text', analyzer: 'english', copy_to: ['search_text'] });
    expect(body.mappings.properties.search_text).toEqual({ type: 'text', analyzer: 'english' });
    expect(body.mappings.properties.principals).toEqual({ type: 'keyword' });
    expect(body.mappings.properties.metadata).toEqual({ type: 'object', enabled: false });
  });

  it('checks the dimensions of an index that already exists', async () => {
    reply = (req) =>
      req.method === 'HEAD'
        ? { status: 200 }
        : { body: { 'db_1_g1-crs': { mappings: { properties: { vector: { type: 'dense_vector', dims: 4 } } } } } };
    await expect(adapter().createIndex('db_1_g1', { dimensions: 3 })).rejects.toMatchObject({ code: 'dimension_mismatch' });
    await expect(adapter().createIndex('db_1_g1', { dimensions: 4 })).resolves.toBeUndefined();
  });

  it('bulk-indexes with external_gte versions through the alias only', async () => {
    reply = () => ({
      body: {
        errors: true,
        items: [{ index: { _index: 'x', status: 409, error: { type: 'version_conflict_engine_exception', reason: 'older' } } }],
      },
    });
    const d = doc();
    await adapter().upsert('db_1_g1', [d]);
    const [bulk] = recorded;
    expect(`${bulk.method} ${bulk.path}`).toBe('POST /db_1_g1/_bulk');
    expect(bulk.query.get('require_alias')).toBe('true');
    expect(bulk.query.get('refresh')).toBe('wait_for');
    expect(bulk.body[0]).toEqual({ index: { _id: 'c1', version: 7, version_type: 'external_gte' } });
    const sent = bulk.body[1];
    expect(sent).toMatchObject({
      chunk_id: 'c1',
      acl_restricted: true,
      principals: [],
      filter_kv: ['m:lang="en"', 'a:connector_id="gh"'],
      expires_at: null,
    });
    expect(sent.vector).toEqual(Array.from(d.vector));
    expect(Buffer.from(sent.vector_f32, 'base64')).toHaveLength(12);
  });

  it('fails on real bulk errors and reports a missing index', async () => {
    reply = () => ({
      body: { errors: true, items: [{ index: { _index: 'x', status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad' } } }] },
    });
    await expect(adapter().upsert('db_1_g1', [doc()])).rejects.toThrow(/mapper_parsing_exception: bad/);
    reply = () => ({
      body: { errors: true, items: [{ index: { _index: 'x', status: 404, error: { type: 'index_not_found_exception', reason: 'no alias' } } }] },
    });
    await expect(adapter().upsert('db_1_g1', [doc()])).rejects.toMatchObject({ code: 'index_not_found' });
  });

  it('builds keyword queries with operators and every filter', async () => {
    reply = () => ({ body: { hits: { hits: [{ _id: 'c1', _score: 2.5, _source: source(doc()) }] } } });
    const es = adapter();
    const [hit] = await es.keywordSearch('db_1_g1', ' red apples ', {
      limit: 7,
      operator: 'and',
      filter: {
        stores: ['memory'],
        collections: [],
        itemIds: ['i1'],
        now: 1000.7,
        includeApps: false,
        principalsAny: ['alice'],
        metadata: { lang: ['en', 'de'], year: 2024 },
        additionalMetadata: { connector_id: 'gh' },
      },
    });
    expect(hit).toMatchObject({ chunkId: 'c1', itemId: 'i1', score: 2.5 });
    expect(hit.doc).not.toHaveProperty('vector');
    const { body } = recorded[0];
    expect(recorded[0].path).toBe('/db_1_g1/_search');
    expect(body.size).toBe(7);
    expect(body._source).toEqual({ excludes: ['vector', 'vector_f32'] });
    expect(body.query.bool.must).toEqual([{ match: { search_text: { query: 'red apples', operator: 'and' } } }]);
    expect(body.query.bool.filter).toEqual([
      { terms: { store: ['memory'] } },
      { match_none: {} },
      { terms: { item_id: ['i1'] } },
      {
        bool: {
          should: [{ bool: { must_not: [{ exists: { field: 'expires_at' } }] } }, { range: { expires_at: { gt: 1000 } } }],
          minimum_should_match: 1,
        },
      },
      { term: { is_app: false } },
      {
        bool: {
          should: [{ term: { acl_restricted: false } }, { terms: { principals: ['__public__', 'alice'] } }],
          minimum_should_match: 1,
        },
      },
      { terms: { filter_kv: ['m:lang="en"', 'm:lang="de"'] } },
      { terms: { filter_kv: ['m:year=2024'] } },
      { terms: { filter_kv: ['a:connector_id="gh"'] } },
    ]);

    await es.keywordSearch('db_1_g1', 'red apples', { limit: 3, operator: 'phrase' });
    expect(recorded[1].body.query.bool.must).toEqual([{ match_phrase: { search_text: { query: 'red apples' } } }]);
    expect(await es.keywordSearch('db_1_g1', '  ', { limit: 3 })).toEqual([]);
    expect(recorded).toHaveLength(2);
  });

  it('searches kNN with the filter inside and reports cosine similarity', async () => {
    reply = () => ({ body: { hits: { hits: [{ _id: 'c1', _score: 0.9, _source: source(doc()) }] } } });
    const [hit] = await adapter().vectorSearch('db_1_g1', [1, 0, 0], { limit: 5, filter: { collections: ['a'] } });
    expect(hit.score).toBeCloseTo(0.8, 10);
    expect(recorded[0].body.knn).toEqual({
      field: 'vector',
      query_vector: [1, 0, 0],
      k: 5,
      num_candidates: 100,
      filter: [{ terms: { collection: ['a'] } }],
    });
  });

  it('lean searches send the same queries and ask _source for the four lean fields only', async () => {
    const d = doc();
    const { chunk_id, item_id, text, version } = source(d);
    reply = () => ({ body: { hits: { hits: [{ _id: 'c1', _score: 0.9, _source: { chunk_id, item_id, text, version } }] } } });
    const es = adapter();
    const filter = { collections: ['a'], principalsAny: ['alice'] };
    const [kw] = await es.keywordSearch('db_1_g1', 'red apples', { limit: 7, operator: 'and', filter, fields: 'lean' });
    const [vec] = await es.vectorSearch('db_1_g1', [1, 0, 0], { limit: 5, filter, fields: 'lean' });
    expect(kw).toEqual({ chunkId: 'c1', itemId: d.itemId, score: 0.9, doc: { chunkId: 'c1', itemId: d.itemId, text: d.text, version: d.version } });
    expect(vec.score).toBeCloseTo(0.8, 10);
    expect(vec.doc).toEqual(kw.doc);
    reply = () => ({ body: { hits: { hits: [] } } });
    await es.keywordSearch('db_1_g1', 'red apples', { limit: 7, operator: 'and', filter });
    await es.vectorSearch('db_1_g1', [1, 0, 0], { limit: 5, filter });
    const lean = [recorded[0].body, recorded[1].body];
    const full = [recorded[2].body, recorded[3].body];
    for (const body of lean) expect(body._source).toEqual({ includes: ['chunk_id', 'item_id', 'text', 'version'] });
    for (const [i, body] of full.entries()) expect({ ...lean[i], _source: body._source }).toEqual(body);
    expect(await es.keywordSearch('db_1_g1', '  ', { limit: 3, fields: 'lean' })).toEqual([]);
    expect(await es.vectorSearch('db_1_g1', [1, 0, 0], { limit: 0, fields: 'lean' })).toEqual([]);
    expect(recorded).toHaveLength(4);
  });

  it('returns chunks in the order asked, with exact float32 vectors', async () => {
    const a = doc({ chunkId: 'a', vector: new Float32Array([Math.PI, -1e-30, 65504.125]) });
    const b = doc({ chunkId: 'b', principals: null, title: null });
    reply = () => ({
      body: {
        docs: [
          { _index: 'x', _id: 'b', found: true, _source: source(b) },
          { _index: 'x', _id: 'missing', found: false },
          { _index: 'x', _id: 'a', found: true, _source: source(a) },
        ],
      },
    });
    const got = await adapter().getChunks('db_1_g1', ['a', 'missing', 'b']);
    expect(got.map((d) => d.chunkId)).toEqual(['a', 'b']);
    expect(got[0].vector).toEqual(a.vector);
    expect(got[1]).toEqual(b);
    expect(recorded[0].path).toBe('/db_1_g1/_mget');
    expect(recorded[0].body).toEqual({ ids: ['a', 'missing', 'b'] });
  });

  it('returns vectors alone in the order asked, reading only the vector fields', async () => {
    const a = doc({ chunkId: 'a', vector: new Float32Array([Math.PI, -1e-30, 65504.125]) });
    const b = doc({ chunkId: 'b', vector: new Float32Array([0.5, 0.25, -2]) });
    const vectorsOnly = (d: ChunkDoc) => ({ vector_f32: source(d).vector_f32 });
    reply = () => ({
      body: {
        docs: [
          { _index: 'x', _id: 'b', found: true, _source: vectorsOnly(b) },
          { _index: 'x', _id: 'missing', found: false },
          { _index: 'x', _id: 'a', found: true, _source: vectorsOnly(a) },
        ],
      },
    });
    const got = await adapter().getVectors('db_1_g1', ['a', 'missing', 'b', 'a']);
    expect(got).toEqual([{ chunkId: 'a', vector: a.vector }, { chunkId: 'b', vector: b.vector }, { chunkId: 'a', vector: a.vector }]);
    expect(recorded[0].path).toBe('/db_1_g1/_mget');
    expect(recorded[0].body).toEqual({ ids: ['a', 'missing', 'b'] });
    expect(recorded[0].query.get('_source_includes')).toBe('vector_f32,vector');
    expect(await adapter().getVectors('db_1_g1', [])).toEqual([]);
    expect(recorded).toHaveLength(1);
  });

  it('pages past the result window with search_after', async () => {
    const page = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ _id: `c${from + i}`, sort: [`c${from + i}`], _source: source(doc({ chunkId: `c${from + i}` })) }));
    let served = 0;
    reply = () => {
      const n = served < 11_000 ? 1000 : 500;
      const hits = page(served, n);
      served += n;
      return { body: { hits: { hits } } };
    };
    const docs = await adapter().listChunks('db_1_g1', { offset: 9_990, limit: 20 });
    expect(docs.map((d) => d.chunkId)).toEqual(Array.from({ length: 20 }, (_, i) => `c${9_990 + i}`));
    expect(recorded).toHaveLength(11);
    expect(recorded[0].body.search_after).toBeUndefined();
    expect(recorded[1].body.search_after).toEqual(['c999']);
    expect(recorded[0].body.sort).toEqual([{ chunk_id: 'asc' }]);
  });

  it('deletes items up to a version, keeping newer chunks', async () => {
    reply = () => ({ body: { deleted: 1 } });
    await adapter().deleteItems('db_1_g1', ['i1', 'i2'], 12);
    expect(recorded[0].path).toBe('/db_1_g1/_delete_by_query');
    expect(recorded[0].query.get('conflicts')).toBe('proceed');
    expect(recorded[0].query.get('refresh')).toBe('true');
    expect(recorded[0].body.query).toEqual({
      bool: { filter: [{ terms: { item_id: ['i1', 'i2'] } }, { range: { version: { lte: 12 } } }] },
    });
  });

  it('maps index_not_found to a typed error on reads and ignores it on deletes', async () => {
    reply = () => ({ status: 404, body: { error: { type: 'index_not_found_exception', reason: 'no such index' }, status: 404 } });
    await expect(adapter().keywordSearch('db_1_g1', 'x', { limit: 1 })).rejects.toMatchObject({ code: 'index_not_found' });
    await expect(adapter().count('db_1_g1')).rejects.toMatchObject({ code: 'index_not_found' });
    await expect(adapter().deleteWhere('db_1_g1', { collections: ['c'] })).resolves.toBeUndefined();
  });

  it('validates index names before any request', async () => {
    await expect(adapter().keywordSearch('db-1', 'x', { limit: 1 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(adapter().keywordSearch('x', 'y', { limit: 1, filter: { metadata: { 'bad key': 1 } } })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(recorded).toEqual([]);
  });
});
