import { randomUUID } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import { LATEST_EXPIRY } from '@crs/domain/items/expiry';
import { streams } from '@crs/domain/streams';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';

/** Inputs at the edges of what validation accepts, each of which would break something if it got past. */
describe('input at the edges', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('edges');
    await t.createDatabase('edges');
  });
  afterAll(async () => {
    await t.close();
  });

  const expiresAt = async (itemId: string) =>
    (await t.ds.query(`SELECT expires_at FROM rm_items WHERE item_id = $1`, [itemId]))[0]?.expires_at?.toISOString() ?? null;

  it('an expiry_time past year 9999 is accepted and stored as the last storable instant; ingestion goes on for everyone', async () => {
    const res = await ingestMemories(t, 'edges', [
      { id: 'far', text: 'A memory about the far future of the ocelot colony.', expiry_time: 251_700_000_000 },
      { id: 'farther', text: 'A memory about the farther future of the ocelot colony.', expiry_time: 1e300 },
    ]);
    expect(res.status).toBe(200);
    await waitForStatus(t, 'edges', ['far', 'farther']);
    expect(await expiresAt('far')).toBe(LATEST_EXPIRY);
    expect(await expiresAt('farther')).toBe(LATEST_EXPIRY);
    const q = await t.request('POST', '/query', { body: { database: 'edges', query: 'ocelot colony future', type: 'memory' } });
    expect(q.body.data.chunks.map((c: any) => c.id).sort()).toEqual(['far', 'farther']);
    await ingestMemories(t, 'edges', [{ id: 'after', text: 'Ingested after them.' }]);
    await waitForStatus(t, 'edges', ['after']);
  });

  it('a log that already holds an expiry written past year 9999 still replays: the projection stores the last instant', async () => {
    await ingestMemories(t, 'edges', [{ id: 'template', text: 'Template memory.' }]);
    await waitForStatus(t, 'edges', ['template']);
    const [ingested] = (await t.store.readAll()).filter((e) => e.type === 'ItemIngested').filter((e) => e.data.itemId === 'template');
    // What the service wrote before the bound existed: an expanded year that Postgres cannot store.
    const itemKey = `legacy-${randomUUID()}`;
    await t.store.append(streams.item(ingested.data.databaseId, itemKey), [
      { type: 'ItemIngested', data: { ...ingested.data, itemKey, itemId: 'legacy-far', expiresAt: '+010002-12-16T05:11:51.420Z' }, metadata: { ...ingested.metadata, eventId: randomUUID() } },
    ]);
    expect(await t.runner.waitFor(await t.store.headPosition(), ['items'], 10_000)).toBe(true);
    expect(await expiresAt('legacy-far')).toBe(LATEST_EXPIRY);
    await ingestMemories(t, 'edges', [{ id: 'after-legacy', text: 'Ingested after the legacy event.' }]);
    await waitForStatus(t, 'edges', ['after-legacy']);
  });

  it('U+0000 in a stored field is 400 INVALID_INPUT naming the field, and nothing is stored; in content it is kept', async () => {
    const query = await t.request('POST', '/query', { body: { database: 'edges', query: 'ocelot \u0000 x' } });
    expect(query.status).toBe(400);
    expect(query.body).toMatchObject({ success: false, error: { code: 'INVALID_INPUT', message: expect.stringContaining('body.query contains the NUL character') } });
    const q = await t.request('POST', '/query', { body: { database: 'edges', query: 'ocelot colony' } });
    const requestId = q.body.meta.request_id;
    const eventsBefore = (await t.store.readAll()).length;
    for (const body of [{ request_id: requestId, feedback: 'bad \u0000 char' }, { request_id: requestId, feedback: 'ok', metadata: { k: '\u0000' } }]) {
      const res = await t.request('POST', '/feedback', { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
    }
    const status = await t.request('GET', '/context/status?database=edges&id=x%00y');
    expect(status.status).toBe(400);
    expect(status.body.error.message).toContain('query string.id contains the NUL character');
    const patch = await t.request('PATCH', '/context/far/metadata', { body: { database: 'edges', title: 't\u0000' } });
    expect(patch.status).toBe(400);
    const byId = await ingestMemories(t, 'edges', [{ id: 'nul\u0000id', text: 'x' }]);
    expect(byId.status).toBe(400);
    expect(byId.body.error.message).toContain('memories[0].id contains the NUL character');
    const byMeta = await ingestMemories(t, 'edges', [{ id: 'nul-meta', text: 'x', additional_metadata: { thread: 'a\u0000b' } }]);
    expect(byMeta.status).toBe(400);
    expect(byMeta.body.error.message).toContain('memories[0].additional_metadata.thread');
    expect((await t.store.readAll()).length).toBe(eventsBefore);
    // Content is stored as bytes: a NUL inside a memory's text is kept, as before.
    const inText = await ingestMemories(t, 'edges', [{ id: 'nul-text', text: 'before\u0000after the ocelot' }]);
    expect(inText.status).toBe(200);
    await waitForStatus(t, 'edges', ['nul-text']);
  });

  it('a body of a content type the endpoint does not take is 415 UNSUPPORTED_MEDIA_TYPE naming both, and changes nothing', async () => {
    const eventsBefore = (await t.store.readAll()).length;
    const json = await t.request('POST', '/context/ingest', { body: { type: 'memory', database: 'edges', memories: [{ text: 'x' }] } });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'this endpoint takes multipart/form-data, not application/json' } });
    const text = await t.app.inject({ method: 'POST', url: '/feedback', payload: '{"request_id":"11111111-1111-4111-8111-111111111111","feedback":"x"}', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'text/plain' } });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    for (const url of ['/query', '/memories/add_memory', '/feedback']) {
      const form = await postMultipart(t, url, { database: 'edges', query: 'x', memories: '[{"text":"x"}]' });
      expect([url, form.status, form.body.error]).toEqual([url, 415, { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'this endpoint takes application/json, not multipart/form-data' }]);
    }
    expect((await t.store.readAll()).length).toBe(eventsBefore);
    // Bodiless calls without a Content-Type still work (the SDK sends those).
    const bodiless = await t.app.inject({ method: 'POST', url: '/webhooks/indexing/test', headers: { authorization: `Bearer ${t.key}` } });
    expect(bodiless.statusCode).toBe(404); // no webhook registered: reached the handler
  });

  it('hostile JSON is 400 before any work: nesting past 64 levels, more than 1000 fields, unpaired surrogates, NUL in a path', async () => {
    const eventsBefore = (await t.store.readAll()).length;
    const raw = async (url: string, payload: string, method: 'POST' | 'PATCH' = 'POST') =>
      t.app.inject({ method, url, payload, headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' } });
    const deep = await raw('/databases', '['.repeat(10_000) + ']'.repeat(10_000));
    expect(deep.statusCode).toBe(400);
    expect(deep.json().error).toEqual({ code: 'INVALID_INPUT', message: 'body[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0] is nested more than 64 levels deep' });
    const wide = await raw('/query', JSON.stringify({ database: 'edges', query: 'x', ...Object.fromEntries(Array.from({ length: 300_000 }, (_, i) => [`k${i}`, 1])) }));
    expect(wide.statusCode).toBe(400);
    expect(wide.json().error.message).toBe('body has 300002 fields, more than 1000');
    const filters = await raw('/query', JSON.stringify({ database: 'edges', query: 'x', metadata_filters: { additional_metadata: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'v'])) } }));
    expect(filters.statusCode).toBe(400);
    expect(filters.json().error.message).toContain('body.metadata_filters.additional_metadata has 50000 fields');
    const manyConditions = await t.request('POST', '/query', { body: { database: 'edges', query: 'x', metadata_filters: { additional_metadata: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v'])) } } });
    expect(manyConditions.status).toBe(400);
    expect(manyConditions.body.error.message).toBe('metadata_filters has 101 conditions, more than 100');
    const manyValues = await t.request('POST', '/query', { body: { database: 'edges', query: 'x', metadata_filters: { additional_metadata: { k: Array.from({ length: 1001 }, (_, i) => `v${i}`) } } } });
    expect(manyValues.status).toBe(400);
    expect(manyValues.body.error.message).toContain('lists 1001 values, more than 1000');
    const surrogate = await raw('/query', '{"database":"edges","query":"a\\ud800b"}');
    expect(surrogate.statusCode).toBe(400);
    expect(surrogate.json().error.message).toContain('body.query contains an unpaired UTF-16 surrogate');
    const surrogateItem = await ingestMemories(t, 'edges', [{ id: 'half\ud800', text: 'x' }]);
    expect(surrogateItem.status).toBe(400);
    const inPath = await raw('/context/%00/metadata', '{"database":"edges","title":"t"}', 'PATCH');
    expect(inPath.statusCode).toBe(400);
    expect(inPath.json().error.message).toContain('contains the NUL character');
    expect((await t.store.readAll()).length).toBe(eventsBefore);
    expect((await t.request('GET', '/health')).status).toBe(200);
    const atLimits = await t.request('POST', '/query', { body: { database: 'edges', query: 'x', metadata_filters: { additional_metadata: { ...Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`k${i}`, 'v'])), k: Array.from({ length: 1000 }, (_, i) => `v${i}`) } } } });
    expect(atLimits.status).toBe(200);
  });

  it('length limits count characters (code points), not UTF-16 units: 4,000 emoji of instructions and a 256-character principal pass', async () => {
    const otter = '\u{1F9A6}';
    const ok = await ingestMemories(t, 'edges', [{ id: 'emoji-ok', text: 'x', infer: true, custom_instructions: otter.repeat(4000) }]);
    expect(ok.status).toBe(200);
    const over = await ingestMemories(t, 'edges', [{ id: 'emoji-over', text: 'x', infer: true, custom_instructions: otter.repeat(4001) }]);
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain('longer than 4000 characters');
    const principal = `group:p:${otter.repeat(248)}`; // 256 characters, 504 UTF-16 units
    const app = await postMultipartApp(principal);
    expect(app.status).toBe(200);
    expect((await postMultipartApp(`${principal}x`)).status).toBe(400);
  });

  it('a multipart body without a boundary, or with a file part cut short, is 400, not 500', async () => {
    const noBoundary = await t.app.inject({ method: 'POST', url: '/context/ingest', payload: 'x', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data' } });
    expect([noBoundary.statusCode, noBoundary.json().error.code]).toEqual([400, 'INVALID_INPUT']);
    // Every field a knowledge ingest needs, then a file part cut short (no closing delimiter).
    const unclosed = await t.app.inject({
      method: 'POST',
      url: '/context/ingest',
      payload:
        '--XX\r\nContent-Disposition: form-data; name="type"\r\n\r\nknowledge\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="database"\r\n\r\nedges\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="documents"; filename="cut.txt"\r\nContent-Type: text/plain\r\n\r\nthe file is cut sh',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data; boundary=XX' },
    });
    expect([unclosed.statusCode, unclosed.json().error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(unclosed.json().error.message).toMatch(/^the multipart body could not be read/);
    // Complete field parts, the closing delimiter missing: the last field (here upsert=false) would be lost silently.
    const cut = await t.app.inject({
      method: 'POST',
      url: '/context/ingest',
      payload:
        '--XX\r\nContent-Disposition: form-data; name="type"\r\n\r\nmemory\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="database"\r\n\r\nedges\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="memories"\r\n\r\n[{"id":"cut-1","text":"x"}]\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="upsert"\r\n\r\nfal',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data; boundary=XX' },
    });
    expect([cut.statusCode, cut.json().error.message]).toEqual([400, 'the multipart body ended before its closing boundary (cut short?); nothing was stored']);
    // Nothing of it in the log (the inferences of the test before may still be appending their own events meanwhile).
    expect((await t.store.readAll()).filter((e) => JSON.stringify(e.data).includes('cut-1'))).toEqual([]);
    // A quoted boundary, the body whole (with an epilogue): accepted.
    const whole = await t.app.inject({
      method: 'POST',
      url: '/context/ingest',
      payload:
        '--X-Y\r\nContent-Disposition: form-data; name="type"\r\n\r\nmemory\r\n' +
        '--X-Y\r\nContent-Disposition: form-data; name="database"\r\n\r\nedges\r\n' +
        '--X-Y\r\nContent-Disposition: form-data; name="memories"\r\n\r\n[{"id":"whole-1","text":"x"}]\r\n--X-Y--\r\nan epilogue\r\n',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data; boundary="X-Y"' },
    });
    expect(whole.statusCode).toBe(200);
  });

  it('an integer metadata value beyond what JSON numbers hold exactly is 400, not silently rounded', async () => {
    await t.createDatabase('edges-int', { metadata_schema: [{ name: 'n', type: 'integer' }] });
    const ok = await ingestMemories(t, 'edges-int', [{ id: 'i1', text: 'x', metadata: JSON.stringify({ n: 9007199254740991 }) }]);
    expect(ok.status).toBe(200);
    const big = await ingestMemories(t, 'edges-int', [{ id: 'i2', text: 'x', metadata: '{"n": 9223372036854775807}' }]);
    expect(big.status).toBe(400);
    expect(big.body.error.message).toContain('at most 9007199254740991 in magnitude');
  });

  it('an item id of 256 characters can be addressed in a path (metadata and ACL edits)', async () => {
    const id = 'L'.repeat(256);
    await ingestMemories(t, 'edges', [{ id, text: 'A memory with a long id.' }]);
    await waitForStatus(t, 'edges', [id]);
    const patch = await t.request('PATCH', `/context/${id}/metadata`, { body: { database: 'edges', acl: [] } });
    expect(patch.status).toBe(200);
  });

  it('relations on files are stored and followed in thinking mode ({ids} or the SDK README form {cortex_source_ids})', async () => {
    const files = [
      { filename: 'target.txt', content: 'The lighthouse keeper logbook for the winter storms.' },
      { filename: 'source.txt', content: 'Quarterly relmarker report about coastal beacons.' },
      { filename: 'other.txt', content: 'A third relmarker note about buoys.' },
    ];
    const document_metadata = JSON.stringify([
      { id: 'f-target' },
      { id: 'f-source', relations: { cortex_source_ids: ['f-target'], properties: { why: 'cites it' } } },
      { id: 'f-other', relations: { ids: ['f-target'] } },
    ]);
    const res = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'edges', document_metadata }, files);
    expect(res.status).toBe(200);
    await waitForStatus(t, 'edges', ['f-target', 'f-source', 'f-other']);
    const list = await t.request('POST', '/context/list', { body: { database: 'edges', type: 'knowledge', ids: ['f-source', 'f-other'] } });
    expect(list.body.data.sources.map((s: any) => [s.id, s.relations])).toEqual(expect.arrayContaining([['f-source', { ids: ['f-target'] }], ['f-other', { ids: ['f-target'] }]]));
    const q = await t.request('POST', '/query', { body: { database: 'edges', query: 'relmarker report coastal beacons', type: 'knowledge', mode: 'thinking', max_results: 1 } });
    expect(q.body.data.chunks[0].id).toBe('f-source');
    expect(Object.values(q.body.data.additional_context ?? {}).map((c: any) => c.id)).toContain('f-target');
    const bogus = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'edges', document_metadata: JSON.stringify([{ id: 'f-bogus', relations: { bogus: 1 } }]) }, [{ filename: 'b.txt', content: 'x' }]);
    expect(bogus.status).toBe(400);
    for (const relations of [{ ids: 5 }, { ids: {} }, { cortex_source_ids: true }]) {
      const notList = await ingestMemories(t, 'edges', [{ id: 'rel-bad', text: 'x', relations }]);
      expect([JSON.stringify(relations), notList.status]).toEqual([JSON.stringify(relations), 400]);
    }
  });

  it('Fastify\'s early errors come in the envelope; a text field past 25 MiB is 413 and the connection closes', async () => {
    const badUrl = await t.app.inject({ method: 'GET', url: '/webhooks/indexing/deliveries/%ZZ', headers: { authorization: `Bearer ${t.key}` } });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json()).toMatchObject({ success: false, data: null, error: { code: 'INVALID_INPUT' }, meta: { request_id: expect.any(String), api_version: '2.0.1' } });
    const big = await postMultipart(t, '/context/ingest', { type: 'memory', database: 'edges', memories: 'x'.repeat(25 * 1024 * 1024 + 1) });
    expect(big.status).toBe(413);
    expect(big.body.error).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'field memories is larger than 25 MiB' });
    expect(big.headers.connection).toBe('close');
  });

  it('what Node\'s HTTP parser refuses (oversized headers, broken framing) is answered in the envelope, and the connection closes', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(request));
        let answer = '';
        socket.on('data', (d) => (answer += d.toString('utf8')));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    const envelope = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    const huge = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(huge).toMatch(/\r\nConnection: close\r\n/);
    expect(envelope(huge)).toMatchObject({ success: false, data: null, error: { code: 'HEADERS_TOO_LARGE', message: expect.stringContaining('16 KiB') }, meta: { request_id: expect.any(String), api_version: '2.0.1' } });
    const framing = await raw('POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    expect(framing).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(envelope(framing)).toMatchObject({ success: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(/^The request is not valid HTTP\/1\.1 \(.+\)\.$/) } });
  });

  it('a field part declared application/json is read as its JSON text; one that does not parse is 400, not 406', async () => {
    const send = (memories: string) =>
      t.app.inject({
        method: 'POST',
        url: '/context/ingest',
        payload:
          '--XX\r\nContent-Disposition: form-data; name="type"\r\n\r\nmemory\r\n' +
          '--XX\r\nContent-Disposition: form-data; name="database"\r\n\r\nedges\r\n' +
          `--XX\r\nContent-Disposition: form-data; name="memories"\r\nContent-Type: application/json\r\n\r\n${memories}\r\n--XX--\r\n`,
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data; boundary=XX' },
      });
    const typed = await send('[{"id":"json-part","text":"A memory sent in a part typed application/json."}]');
    expect([typed.statusCode, typed.json().data.results[0]]).toEqual([200, expect.objectContaining({ id: 'json-part', status: 'queued' })]);
    await waitForStatus(t, 'edges', ['json-part']);
    const found = await t.request('POST', '/query', { body: { database: 'edges', query: 'memory sent in a part typed application/json', type: 'memory', max_results: 1 } });
    expect(found.body.data.chunks[0]).toMatchObject({ id: 'json-part', chunk_content: expect.stringContaining('A memory sent in a part typed application/json.') });
    const broken = await send('[{"id":"json-broken",');
    expect([broken.statusCode, broken.json().error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(broken.json().error.message).toMatch(/declared application\/json is not valid JSON/);
  });

  it('a field over 25 MiB is 413 PAYLOAD_TOO_LARGE naming it, declared application/json or not; nothing is stored', async () => {
    const send = (url: string, name: string, value: string, typed: boolean) =>
      t.app.inject({
        method: 'POST',
        url,
        payload:
          '--XX\r\nContent-Disposition: form-data; name="type"\r\n\r\nmemory\r\n' +
          '--XX\r\nContent-Disposition: form-data; name="database"\r\n\r\nedges\r\n' +
          `--XX\r\nContent-Disposition: form-data; name="${name}"\r\n${typed ? 'Content-Type: application/json\r\n' : ''}\r\n${value}\r\n--XX--\r\n`,
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data; boundary=XX' },
      });
    const big = (id: string) => JSON.stringify([{ id, text: 'x'.repeat(25 * 1024 * 1024) }]); // valid JSON, just over the limit
    for (const [url, name, typed] of [['/context/ingest', 'memories', true], ['/context/ingest', 'memories', false], ['/ingestion/upload_knowledge', 'app_knowledge', true]] as const) {
      const res = await send(url, name, big(`huge-${name}-${typed}`), typed);
      expect([url, name, typed, res.statusCode, res.json().error.code]).toEqual([url, name, typed, 413, 'PAYLOAD_TOO_LARGE']);
      expect(res.json()).toMatchObject({ success: false, data: null, error: { message: `field ${name} is larger than 25 MiB` }, meta: { request_id: expect.any(String) } });
      expect(res.headers.connection).toBe('close');
    }
    expect((await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE item_id LIKE 'huge-%'`))[0].n).toBe(0);
    // Just under the limit it is read (and here refused for what it holds, not for its size).
    const under = await send('/context/ingest', 'memories', `"${'x'.repeat(25 * 1024 * 1024 - 3)}"`, true);
    expect([under.statusCode, under.json().error.code]).toEqual([400, 'INVALID_INPUT']);
    expect(under.json().error.message).not.toMatch(/larger than/);

    // The part limits hold with JSON-typed fields among the parts: 20 files, 100 fields (typed ones included).
    const parts = (n: { files: number; fields: number; typed: number }) =>
      '--XX\r\nContent-Disposition: form-data; name="type"\r\n\r\nknowledge\r\n' +
      Array.from({ length: n.files }, (_, i) => `--XX\r\nContent-Disposition: form-data; name="documents"; filename="f${i}.txt"\r\nContent-Type: text/plain\r\n\r\nfile ${i}\r\n`).join('') +
      Array.from({ length: n.fields }, (_, i) => `--XX\r\nContent-Disposition: form-data; name="pad${i}"\r\n\r\nx\r\n`).join('') +
      Array.from({ length: n.typed }, (_, i) => `--XX\r\nContent-Disposition: form-data; name="json${i}"\r\nContent-Type: application/json\r\n\r\n{}\r\n`).join('') +
      '--XX--\r\n';
    const limited = async (n: { files: number; fields: number; typed: number }) => {
      const res = await t.app.inject({ method: 'POST', url: '/context/ingest', payload: parts(n), headers: { authorization: `Bearer ${t.key}`, 'content-type': 'multipart/form-data; boundary=XX' } });
      return [res.statusCode, res.json().error.code, res.json().error.message];
    };
    expect(await limited({ files: 21, fields: 0, typed: 0 })).toEqual([413, 'PAYLOAD_TOO_LARGE', 'Too many files in one request']);
    expect(await limited({ files: 0, fields: 50, typed: 51 })).toEqual([413, 'PAYLOAD_TOO_LARGE', 'Too many fields in one request']);
    expect(await limited({ files: 0, fields: 101, typed: 0 })).toEqual([413, 'PAYLOAD_TOO_LARGE', 'Too many fields in one request']);
    // Within the limits the request is read to its end (and refused here for its unknown fields: 400).
    expect((await limited({ files: 20, fields: 49, typed: 50 }))[0]).toBe(400);
  });

  it('a body of a type no parser takes (text/plain, form-encoded) is 415 naming both types; a query of white space is 400', async () => {
    const send = (url: string, type: string) => t.app.inject({ method: 'POST', url, payload: 'query=x', headers: { authorization: `Bearer ${t.key}`, 'content-type': type } });
    for (const [url, type, takes] of [
      ['/query', 'text/plain', 'application/json'],
      ['/recall/full_recall', 'application/x-www-form-urlencoded', 'application/json'],
      ['/context/ingest', 'text/plain', 'multipart/form-data'],
    ]) {
      const res = await send(url, type);
      expect([url, res.statusCode, res.json().error]).toEqual([url, 415, { code: 'UNSUPPORTED_MEDIA_TYPE', message: `this endpoint takes ${takes}, not ${type}` }]);
    }
    const blank = await t.request('POST', '/query', { body: { database: 'edges', query: ' \n\t ' } });
    expect([blank.status, blank.body.error.code, blank.body.error.message]).toEqual([400, 'INVALID_INPUT', expect.stringContaining('query must contain something other than white space')]);
  });

  it('file metadata pairs with every file or the request is 400: an entry left without a file would drop its ACL silently', async () => {
    const file = (name: string) => ({ field: 'documents', filename: name, contentType: 'text/plain', content: `Board minutes ${name}.` });
    const byWrongName = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'edges', file_metadata: JSON.stringify({ 'A.txt': { id: 'secretdoc', acl: ['ceo@x.com'] } }) }, [file('a.txt')]);
    expect([byWrongName.status, byWrongName.body.error.message]).toEqual([400, expect.stringContaining('file_metadata names no uploaded file: "A.txt" (files: "a.txt"')]);
    const tooFew = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'edges', document_metadata: JSON.stringify([{ id: 'x1', acl: ['ceo@x.com'] }]) }, [file('one.txt'), file('two.txt')]);
    expect([tooFew.status, tooFew.body.error.message]).toEqual([400, expect.stringContaining('file metadata has 1 entries for 2 file(s)')]);
    expect((await t.store.readAll()).filter((e) => /secretdoc|"x1"|one\.txt|two\.txt/.test(JSON.stringify(e.data)))).toEqual([]);
    const paired = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'edges', file_metadata: JSON.stringify({ 'a.txt': { id: 'paired-doc', acl: ['ceo@x.com'] } }) }, [file('a.txt'), file('b.txt')]);
    expect(paired.status).toBe(200);
    expect(paired.body.data.results.map((r: any) => r.id)).toContain('paired-doc');
  });

  it('a deletion given two different targets (query string and body) is 400 and deletes nothing', async () => {
    await t.createDatabase('keepme');
    await ingestMemories(t, 'edges', [{ id: 'keep-item', text: 'Not to be deleted.' }]);
    await waitForStatus(t, 'edges', ['keep-item']);
    for (const [method, url, body] of [
      ['DELETE', '/databases?database=keepme', { database: 'edges' }],
      ['DELETE', '/databases/collections?database=edges&collection=default', { collection: 'other' }],
      ['DELETE', '/context?database=keepme', { database: 'edges', ids: ['keep-item'] }],
    ] as const) {
      const res = await t.request(method, url, { body });
      expect([url, res.status, res.body.error?.message]).toEqual([url, 400, expect.stringContaining('given twice with different values')]);
    }
    expect((await t.request('GET', '/databases/status?database=keepme')).status).toBe(200);
    expect((await t.request('GET', '/context/status?database=edges&id=keep-item')).body.data.indexing_status).toBe('completed');
    // The same target in both places is fine.
    expect((await t.request('DELETE', '/databases?database=keepme', { body: { database: 'keepme' } })).status).toBe(202);
  });

  it('a collection name that cannot exist is 400 everywhere (lookups said 404), with detail when sent as sub_tenant_id; a schema whose type and data_type disagree is 400', async () => {
    const status = await t.request('GET', '/context/status?database=edges&collection=bad%20name!&id=x');
    expect([status.status, status.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    const del = await t.request('DELETE', '/databases/collections?database=edges&collection=-bad');
    expect([del.status, del.body.error.code]).toEqual([400, 'INVALID_INPUT']);
    const legacy = await t.request('POST', '/query', { body: { tenant_id: 'edges', sub_tenant_id: 'bad name!', query: 'x' } });
    expect([legacy.status, legacy.body.error.message]).toEqual([400, expect.stringMatching(/^sub_tenant_id must be/)]);
    expect(legacy.body.detail).toMatchObject({ deprecated: true, deprecated_field: 'sub_tenant_id', preferred_field: 'collection' });
    for (const url of ['/databases', '/tenants']) {
      const badName = await t.request('POST', url, { body: { tenant_id: '-bad' } });
      expect([url, badName.status, badName.body.detail]).toEqual([url, 400, expect.objectContaining({ deprecated: true, deprecated_field: 'tenant_id', preferred_field: 'database' })]);
    }
    const schema = await t.request('POST', '/databases', { body: { database: 'typeclash', metadata_schema: [{ name: 'x', type: 'string', data_type: 'INT64' }] } });
    expect([schema.status, schema.body.error.message]).toEqual([400, expect.stringContaining('which disagree')]);
    expect((await t.request('POST', '/databases', { body: { database: 'typeagree', metadata_schema: [{ name: 'x', type: 'integer', data_type: 'INT64' }] } })).status).toBeLessThan(300);
  });

  it('an id holding a comma has a status: a single id is taken whole, lists may still be comma-separated', async () => {
    await ingestMemories(t, 'edges', [{ id: 'a,b', text: 'An id with a comma.' }, { id: 'c1', text: 'x' }, { id: 'c2', text: 'y' }]);
    await waitForStatus(t, 'edges', ['c1', 'c2']);
    let one: any;
    for (let i = 0; i < 300 && one?.body?.data?.indexing_status !== 'completed'; i++) {
      one = await t.request('GET', '/context/status?database=edges&id=a%2Cb');
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(one.body.data).toMatchObject({ id: 'a,b', indexing_status: 'completed' });
    const list = await t.request('GET', '/context/status?database=edges&ids=c1,c2');
    expect(list.body.data.statuses.map((s: any) => s.id)).toEqual(['c1', 'c2']);
  });

  const postMultipartApp = (principal: string) =>
    postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'edges', app_knowledge: JSON.stringify([{ id: `acl-${principal.length}`, content: { text: 'x' }, acl: [principal] }]) });
});
