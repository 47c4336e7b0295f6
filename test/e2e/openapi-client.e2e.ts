import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { Client } from 'pg';
import { configFromEnv } from '@crs/config';
import { ingestMemories, waitForStatus } from '../support/ingest';
import { createTestDatabase } from '../support/test-database';
import { startTestApp, type TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

/** Operations that take no body at all; every other POST, PATCH and DELETE must document its body. */
const BODILESS = [
  'DELETE /webhooks/indexing',
  'DELETE /webhooks/indexing/signing-secret',
  'POST /webhooks/indexing/test',
  'POST /webhooks/indexing/deliveries/{delivery_id}/retry',
  'POST /connectors/{id}/sync',
  'POST /connectors/{id}/pause',
  'POST /connectors/{id}/resume',
  'DELETE /connectors/{id}/resources/{resource_id}',
  'DELETE /connectors/{id}',
];

type Schema = Record<string, any>;
type Doc = { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };

function operations(doc: Doc): { key: string; method: string; path: string; op: Schema }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, method, path, op })));
}

/**
 * The ways a value departs from an OpenAPI 3.0 schema: the subset the document uses ($ref, allOf, oneOf, nullable,
 * enum, the JSON types, required properties, additionalProperties). A field the schema does not declare is a departure
 * too (unless additionalProperties allows it): the document must name what the service answers.
 */
function departures(doc: Doc, schema: Schema, value: unknown, at = '$'): string[] {
  if (schema.$ref) return departures(doc, doc.components.schemas[String(schema.$ref).replace('#/components/schemas/', '')], value, at);
  if (schema.allOf) {
    const parts = schema.allOf.map((s: Schema) => resolve(doc, s));
    const declared = new Set(parts.flatMap((s: Schema) => Object.keys(s.properties ?? {})));
    const open = parts.some((s: Schema) => s.additionalProperties);
    return parts.flatMap((s: Schema) => departures(doc, { ...s, additionalProperties: open || { declaredElsewhere: [...declared] } }, value, at));
  }
  if (schema.oneOf) return schema.oneOf.some((s: Schema) => departures(doc, s, value, at).length === 0) ? [] : [`${at}: matches none of its alternatives`];
  if (value === null) return schema.nullable ? [] : [`${at}: null, not nullable`];
  if (value === undefined) return [`${at}: missing`];
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not one of ${JSON.stringify(schema.enum)}`];
  const type = schema.type ?? (schema.properties ? 'object' : undefined);
  const wrong = (what: string) => [`${at}: ${JSON.stringify(value)?.slice(0, 80)} is not ${what}`];
  switch (type) {
    case 'string':
      return typeof value === 'string' ? [] : wrong('a string');
    case 'number':
      return typeof value === 'number' ? [] : wrong('a number');
    case 'integer':
      return Number.isInteger(value) ? [] : wrong('an integer');
    case 'boolean':
      return typeof value === 'boolean' ? [] : wrong('a boolean');
    case 'array':
      return Array.isArray(value) ? value.flatMap((v, i) => departures(doc, schema.items ?? {}, v, `${at}[${i}]`)) : wrong('an array');
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return wrong('an object');
      const o = value as Record<string, unknown>;
      const props: Record<string, Schema> = schema.properties ?? {};
      const out = (schema.required ?? []).filter((k: string) => o[k] === undefined).map((k: string) => `${at}.${k}: required, missing`);
      for (const [k, v] of Object.entries(o)) {
        if (props[k]) out.push(...departures(doc, props[k], v, `${at}.${k}`));
        else if (typeof schema.additionalProperties === 'object' && schema.additionalProperties.declaredElsewhere) {
          if (!schema.additionalProperties.declaredElsewhere.includes(k)) out.push(`${at}.${k}: not in the schema`);
        } else if (typeof schema.additionalProperties === 'object') out.push(...departures(doc, schema.additionalProperties, v, `${at}.${k}`));
        else if (!schema.additionalProperties) out.push(`${at}.${k}: not in the schema`);
      }
      return out;
    }
    default:
      return [];
  }
}

function resolve(doc: Doc, s: Schema): Schema {
  return s.$ref ? resolve(doc, doc.components.schemas[String(s.$ref).replace('#/components/schemas/', '')]) : s;
}

/** A small program against the generated types: it compiles only if the responses are typed as the API answers them. */
const USAGE = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type QueryOk = paths['/query']['post']['responses']['200']['content']['application/json'];
type Chunk = QueryOk['data']['chunks'][number];

declare const answer: QueryOk;
const chunk: Chunk = answer.data.chunks[0];
export const chunkId: string = chunk.chunk_uuid;
export const sourceId: string = chunk.id;
export const score: number = chunk.relevancy_score;
export const title: string | null = chunk.source_title;
export const success: true = answer.success;
export const requestId: string = answer.meta.request_id;
export const knowledgeSearched: boolean = answer.data.vectorstore_status.knowledge;
// @ts-expect-error a chunk has no such field
export const nothing = chunk.no_such_field;
// @ts-expect-error a success carries no error
export const code: string = answer.error.code;

type Failure = paths['/query']['post']['responses']['404']['content']['application/json'];
declare const failure: Failure;
export const errorCode: string = failure.error.code;
export const failed: false = failure.success;

type Registration = paths['/webhooks/indexing']['get']['responses']['200']['content']['application/json'];
declare const registration: Registration;
export const registered: boolean = registration.registered;
// @ts-expect-error webhook management answers the object itself, not the envelope
export const enveloped = registration.data;

type Recall = paths['/recall/full_recall']['post']['responses']['200']['content']['application/json'];
declare const recall: Recall;
export const recallChunks: string[] = recall.chunks.map((c) => c.chunk_uuid);
export const recallRequestId: string = recall.meta.request_id;

type Connector = paths['/connectors/{id}']['get']['responses']['200']['content']['application/json'];
declare const connector: Connector;
export const accountScope: string = connector.data.provider_account_scope;
export const instructions: string | null = connector.data.custom_instructions;
export const masked: '***' | undefined = connector.data.credentials['connection_string'];
type Resources = paths['/connectors/{id}/resources']['get']['responses']['200']['content']['application/json'];
declare const listed: Resources;
export const ownInstructions: string | undefined = listed.data.resources[0].custom_instructions;
export const lastOutcome: string | undefined = listed.data.resources[0].last_sync?.outcome;

export const statuses: components['schemas']['ContextStatusEntry']['indexing_status'][] = ['queued', 'completed', 'not_found'];

const client = createClient<paths>({ baseUrl: 'http://localhost:8080', headers: { authorization: 'Bearer prefix.secret' } });

export async function use(): Promise<string[]> {
  const query = await client.POST('/query', { body: { query: 'kestrels hunting voles', database: 'birds', max_results: 5 } });
  const ids: string[] = query.data ? query.data.data.chunks.map((c) => c.chunk_uuid) : [];
  if (query.error) ids.push(query.error.error.code);
  // @ts-expect-error query is required
  await client.POST('/query', { body: { database: 'birds' } });
  const status = await client.GET('/context/status', { params: { query: { database: 'birds', id: 'a' } } });
  for (const s of status.data?.data.statuses ?? []) ids.push(s.indexing_status);
  const list = await client.POST('/context/list', { body: { database: 'birds', type: 'memory', page_size: 10 } });
  for (const m of list.data?.data.user_memories ?? []) ids.push(m.memory_id);
  const edited = await client.PATCH('/context/{id}/metadata', { params: { path: { id: 'a' }, query: { database: 'birds' } }, body: { title: 'Kestrels' } });
  if (edited.data) ids.push(edited.data.data.indexing_status);
  const deliveries = await client.GET('/webhooks/indexing/deliveries', { params: { query: { limit: 10 } } });
  for (const d of deliveries.data?.deliveries ?? []) ids.push(d.delivery_id);
  const feedback = await client.POST('/feedback', { body: { request_id: 'r', rating: 'positive', feedback: 'good' } });
  if (feedback.data) ids.push(feedback.data.data.feedback_id);
  const created = await client.POST('/connectors', { body: { provider: 'postgres', database: 'birds', credentials: { connection_string: 'postgres://r:p@db.example.com/shop' } } });
  if (created.data) ids.push(created.data.data.connector_id, created.data.data.account.display_name);
  const configured = await client.POST('/connectors/{id}/configure', { params: { path: { id: 'c' } }, body: { resources: [{ resource_id: 'public.orders', resource_type: 'table', name: 'Orders' }] } });
  if (configured.data) ids.push(configured.data.data.lifecycle);
  // @ts-expect-error a resource needs its name
  await client.POST('/connectors/{id}/resources', { params: { path: { id: 'c' } }, body: { resource_id: 'public.orders', resource_type: 'table' } });
  const databases = await client.GET('/databases');
  for (const d of databases.data?.data.databases ?? []) ids.push(d.embedder.model);
  return ids;
}
`;

describe('the OpenAPI document', () => {
  let t: TestApp;
  let doc: Doc;
  let dir: string;

  beforeAll(async () => {
    // Connectors reach a source database on the test run's own (loopback) server.
    t = await startTestApp('openapi', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true } });
    const res = await t.app.inject({ method: 'GET', url: '/docs-json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
    dir = mkdtempSync(join(tmpdir(), 'crs-openapi-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is OpenAPI 3 and gives every operation a success schema and its error responses in the error envelope', () => {
    expect(doc).toMatchObject({ openapi: expect.stringMatching(/^3\./), info: { version: '2.0.1' } });
    const ops = operations(doc as Doc);
    expect(ops.length).toBeGreaterThanOrEqual(42);
    for (const { key, op } of ops) {
      const statuses = Object.keys(op.responses ?? {});
      const success = statuses.filter((s) => /^2\d\d$/.test(s));
      expect({ key, hasSuccess: success.length > 0 }).toEqual({ key, hasSuccess: true });
      for (const s of success) {
        const content = Object.values(op.responses[s].content ?? {}) as Schema[];
        expect({ key, status: s, schema: content.length > 0 && content.every((c) => c.schema) }).toEqual({ key, status: s, schema: true });
      }
      const errors = statuses.filter((s) => /^[45]\d\d$/.test(s) && !success.includes(s) && op.responses[s].content?.['application/json']?.schema?.$ref?.endsWith('/ErrorEnvelopeDto'));
      expect({ key, clientErrors: errors.some((s) => s.startsWith('4')) }).toEqual({ key, clientErrors: true });
    }
  });

  it('documents the request body of every operation that takes one', () => {
    for (const { key, method, op } of operations(doc as Doc)) {
      if (!['post', 'patch', 'delete'].includes(method)) continue;
      const body = op.requestBody?.content as Record<string, Schema> | undefined;
      if (BODILESS.includes(key)) {
        expect({ key, body }).toEqual({ key, body: undefined });
        continue;
      }
      const schema = body?.['application/json']?.schema ?? body?.['multipart/form-data']?.schema;
      expect({ key, schema: schema?.$ref ?? schema?.type }).toEqual({ key, schema: expect.any(String) });
    }
  });

  it('generates a typed client (openapi-typescript) that type-checks against the API with openapi-fetch', () => {
    const spec = join(dir, 'openapi.json');
    writeFileSync(spec, JSON.stringify(doc));
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), spec, '--output', join(dir, 'schema.ts'), '--default-non-nullable', 'false'], { stdio: 'pipe' });
    writeFileSync(join(dir, 'usage.ts'), USAGE);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const program = ts.createProgram([join(dir, 'schema.ts'), join(dir, 'usage.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
      noUnusedLocals: false,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('types the fields: a missing or mistyped response field does not compile', () => {
    // The negative counterpart: the same checks fail when the type is wrong, so the test above is not vacuous.
    writeFileSync(join(dir, 'wrong.ts'), "import type { paths } from './schema';\ndeclare const a: paths['/query']['post']['responses']['200']['content']['application/json'];\nexport const n: number = a.data.chunks[0].chunk_uuid;\n");
    const program = ts.createProgram([join(dir, 'schema.ts'), join(dir, 'wrong.ts')], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [], skipLibCheck: true });
    const messages = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(messages).toEqual([expect.stringContaining("Type 'string' is not assignable to type 'number'")]);
  }, 120_000);

  describe('what the service answers matches the document', () => {
    /** Sends a request and checks the answer against the response the document gives for its status. */
    async function conforms(method: string, route: string, url: string, opts: Parameters<TestApp['request']>[2] = {}, expected?: number) {
      const res = await t.request(method, url, opts);
      if (expected !== undefined) expect({ url, status: res.status }).toEqual({ url, status: expected });
      const response = doc.paths[route]?.[method.toLowerCase()]?.responses?.[String(res.status)];
      expect({ route, method, status: res.status, documented: response !== undefined }).toEqual({ route, method, status: res.status, documented: true });
      const schema = response.content['application/json'].schema;
      expect({ route, status: res.status, departures: departures(doc, schema, res.body) }).toEqual({ route, status: res.status, departures: [] });
      return res;
    }

    it('for databases and their legacy aliases', async () => {
      await conforms('POST', '/databases', '/databases', { body: { database: 'birds', metadata_schema: [{ name: 'team', type: 'string' }] } }, 202);
      await waitForProvisioned();
      await conforms('GET', '/databases', '/databases', {}, 200);
      await conforms('GET', '/databases/status', '/databases/status?database=birds', {}, 200);
      await conforms('GET', '/databases/collections', '/databases/collections?database=birds', {}, 200);
      await conforms('GET', '/databases/stats', '/databases/stats?database=birds', {}, 200);
      await conforms('GET', '/tenants', '/tenants', {}, 200);
      await conforms('GET', '/tenants/status', '/tenants/status?tenant_id=birds', {}, 200);
      await conforms('GET', '/tenants/sub-tenants', '/tenants/sub-tenants?tenant_id=birds', {}, 200);
      await conforms('GET', '/tenants/stats', '/tenants/stats?tenant_id=birds', {}, 200);
      await conforms('POST', '/tenants', '/tenants', { body: { tenant_id: 'owls' } }, 202);
      await conforms('DELETE', '/tenants', '/tenants?tenant_id=owls', {}, 202);
      await conforms('GET', '/databases/status', '/databases/status?database=nowhere', {}, 404);
      await conforms('GET', '/databases', '/databases', { headers: { authorization: 'Bearer nope.nope' } }, 401);
    });

    async function waitForProvisioned() {
      for (let i = 0; i < 400; i++) {
        const st = await t.request('GET', '/databases/status?database=birds');
        if (st.body?.data?.provisioned) return;
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    it('for context items, queries, the graph and feedback', async () => {
      const added = await conforms('POST', '/memories/add_memory', '/memories/add_memory', { body: { database: 'birds', memories: [{ id: 'm1', text: 'Kestrels hover before they drop onto voles in the long grass.' }] } }, 200);
      expect(added.body.meta.deprecation[0]).toMatchObject({ deprecated: true });
      const ingested = await ingestMemories(t, 'birds', [{ id: 'm2', text: 'Barn owls hunt voles at dusk over the meadow.', metadata: JSON.stringify({ team: 'night' }) }]);
      expect(departures(doc, doc.paths['/context/ingest'].post.responses['200'].content['application/json'].schema, ingested.body)).toEqual([]);
      await waitForStatus(t, 'birds', ['m1', 'm2']);
      await conforms('GET', '/context/status', '/context/status?database=birds&id=m1', {}, 200);
      await conforms('GET', '/context/status', '/context/status?database=birds&ids=m1&ids=missing', {}, 200);
      await conforms('POST', '/ingestion/verify_processing', '/ingestion/verify_processing', { body: { tenant_id: 'birds', file_ids: ['m1', 'm2'] } }, 200);
      await conforms('POST', '/context/list', '/context/list', { body: { database: 'birds', type: 'memory' } }, 200);
      await conforms('POST', '/context/list', '/context/list', { body: { database: 'birds', include_fields: ['content'] } }, 200);
      await conforms('PATCH', '/context/{id}/metadata', '/context/m1/metadata?database=birds', { body: { title: 'Kestrels', acl: ['ann@corp.io'], additional_metadata: { habitat: 'grassland' } } }, 200);
      await conforms('GET', '/context/inspect', '/context/inspect?database=birds&id=m2&mode=both', {}, 200);
      const query = await conforms('POST', '/query', '/query', { body: { database: 'birds', query: 'voles', max_results: 5 } }, 200);
      expect(query.body.data.chunks.length).toBeGreaterThan(0);
      // The check is not vacuous: an undeclared field, a missing one and a mistyped one are each found.
      const schema = doc.paths['/query'].post.responses['200'].content['application/json'].schema;
      const [first, ...rest] = query.body.data.chunks;
      const { chunk_uuid: _dropped, ...withoutId } = first;
      const altered = { ...query.body, data: { ...query.body.data, surprise: 1, chunks: [{ ...withoutId, relevancy_score: 'high' }, ...rest] } };
      expect(departures(doc, schema, altered).sort()).toEqual(['$.data.chunks[0].chunk_uuid: required, missing', '$.data.chunks[0].relevancy_score: "high" is not a number', '$.data.surprise: not in the schema']);
      await conforms('POST', '/query', '/query', { body: { database: 'birds', query: 'voles', mode: 'thinking' } }, 200);
      await conforms('POST', '/recall/full_recall', '/recall/full_recall', { body: { tenant_id: 'birds', query: 'voles' } }, 200);
      await conforms('POST', '/recall/recall_preferences', '/recall/recall_preferences', { body: { tenant_id: 'birds', query: 'voles' } }, 200);
      await conforms('GET', '/context/relations', '/context/relations?database=birds', {}, 200);
      await conforms('GET', '/context/graph/neighbours', '/context/graph/neighbours?database=birds&entity=voles', {}, 200);
      const entities = await t.request('GET', '/context/graph/entities?database=birds&id=m2');
      await conforms('GET', '/context/graph/entities', '/context/graph/entities?database=birds&id=m2', {}, entities.status === 200 ? 200 : 404);
      await conforms('POST', '/feedback', '/feedback', { body: { request_id: query.body.meta.request_id, rating: 'positive', feedback: 'the owl was right' } }, 201);
      await conforms('POST', '/feedback', '/feedback', { body: { request_id: query.body.meta.request_id } }, 400);
      await conforms('DELETE', '/context', '/context', { body: { database: 'birds', ids: ['m2', 'missing'] } }, 200);
      await conforms('POST', '/query', '/query', { body: { database: 'birds' } }, 400);
    }, 120_000);

    it('for connectors and their resources', async () => {
      const source = await createTestDatabase('openapi_source');
      const admin = new Client({ connectionString: source });
      await admin.connect();
      await admin.query('CREATE TABLE public.orders (id int PRIMARY KEY, title text)');
      await admin.end();
      await conforms('GET', '/connectors/providers', '/connectors/providers?id=postgres', {}, 200);
      await conforms('GET', '/connectors/providers', '/connectors/providers?id=none', {}, 404);
      const created = await conforms('POST', '/connectors', '/connectors', { body: { provider: 'postgres', database: 'birds', credentials: { connection_string: source }, custom_instructions: 'Orders.' } }, 201);
      const id = created.body.data.connector_id;
      await conforms('POST', '/connectors', '/connectors', { body: { provider: 'nope', database: 'birds', credentials: {} } }, 400);
      await conforms('GET', '/connectors/{id}/discover', `/connectors/${id}/discover`, {}, 200);
      await conforms('POST', '/connectors/{id}/configure', `/connectors/${id}/configure`, { body: { resources: [{ resource_id: 'public.orders', resource_type: 'table', name: 'Orders', acl: ['ann@corp.io'] }] } }, 200);
      await conforms('POST', '/connectors/{id}/configure', `/connectors/${id}/configure`, { body: { resources: [{ resource_id: 'public.orders' }] } }, 400);
      await conforms('GET', '/connectors/{id}/status', `/connectors/${id}/status`, {}, 200);
      await conforms('GET', '/connectors', '/connectors', {}, 200);
      await conforms('GET', '/connectors/{id}', `/connectors/${id}`, {}, 200);
      await conforms('GET', '/connectors/{id}/resources', `/connectors/${id}/resources`, {}, 200);
      await conforms('POST', '/connectors/{id}/sync', `/connectors/${id}/sync`, {}, 202);
      await conforms('POST', '/connectors/{id}/pause', `/connectors/${id}/pause`, {}, 200);
      await conforms('POST', '/connectors/{id}/resume', `/connectors/${id}/resume`, {}, 200);
      await conforms('PATCH', '/connectors/{id}', `/connectors/${id}`, { body: { sync_interval_seconds: 600, custom_instructions: '' } }, 200);
      await conforms('PATCH', '/connectors/{id}/resources/{resource_id}', `/connectors/${id}/resources/public.orders`, { body: { custom_instructions: 'Net amounts.' } }, 200);
      await conforms('POST', '/connectors/{id}/resources', `/connectors/${id}/resources`, { body: { resource_id: 'public.orders', resource_type: 'table', name: 'Orders' } }, 200);
      await conforms('DELETE', '/connectors/{id}/resources/{resource_id}', `/connectors/${id}/resources/public.orders`, {}, 202);
      await conforms('DELETE', '/connectors/{id}', `/connectors/${id}?content=keep`, {}, 202);
      await conforms('GET', '/connectors/{id}', `/connectors/${id}`, {}, 404);
    }, 60_000);

    it('for webhook management, health and readiness (answered directly)', async () => {
      await conforms('GET', '/webhooks/indexing', '/webhooks/indexing', {}, 200);
      await conforms('GET', '/webhooks/indexing/deliveries', '/webhooks/indexing/deliveries?limit=5', {}, 200);
      await conforms('GET', '/webhooks/indexing/deliveries/{delivery_id}', '/webhooks/indexing/deliveries/none', {}, 404);
      await conforms('POST', '/webhooks/indexing/test', '/webhooks/indexing/test', {}, 404);
      await conforms('POST', '/webhooks/indexing', '/webhooks/indexing', { body: { url: 'http://127.0.0.1/hook' } }, 400);
      await conforms('POST', '/webhooks/indexing/signing-secret', '/webhooks/indexing/signing-secret', { body: { signing_secret: 'x'.repeat(20), generate_signing_secret: true } }, 422);
      await conforms('DELETE', '/webhooks/indexing', '/webhooks/indexing', {}, 200);
      await conforms('GET', '/health', '/health', {}, 200);
      const ready = await t.request('GET', '/ready');
      await conforms('GET', '/ready', '/ready', {}, ready.status);
    });
  });
});
