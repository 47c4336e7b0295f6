import { createServer } from 'node:net';
import { EmbeddingError } from '@crs/embeddings/embedder.port';
import { OpenAiCompatibleEmbedder, embeddingsUrl, type OpenAiCompatibleEmbedderOptions } from '@crs/embeddings/openai-compatible.embedder';
import { dot } from '@crs/embeddings/unit-vector';
import { FakeOpenAiServer } from './embedder.fake-openai-server';

const server = new FakeOpenAiServer(32);

beforeAll(() => server.start());
afterAll(() => server.stop());
beforeEach(() => server.reset());

const embedder = (options: Partial<OpenAiCompatibleEmbedderOptions> = {}) =>
  new OpenAiCompatibleEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed', dimensions: 32, retryBaseDelayMs: 5, ...options });

const texts = (n: number) => Array.from({ length: n }, (_, i) => `text number ${i}`);

describe('OpenAiCompatibleEmbedder against a fake server', () => {
  it('batches requests and keeps the input order (the server answers in reverse)', async () => {
    const input = texts(10);
    const vectors = await embedder({ batchSize: 4 }).embed(input);
    expect(server.requests.map((r) => r.body.input.length)).toEqual([4, 4, 2]);
    expect(server.requests.flatMap((r) => r.body.input)).toEqual(input);
    expect(server.requests[0].body.model).toBe('fake-embed');
    const singles = await embedder().embed([input[0], input[9]]);
    expect(dot(vectors[0], singles[0])).toBeCloseTo(1, 6);
    expect(dot(vectors[9], singles[1])).toBeCloseTo(1, 6);
  });

  it('batches 64 texts per request by default', async () => {
    await embedder().embed(texts(130));
    expect(server.requests.map((r) => r.body.input.length)).toEqual([64, 64, 2]);
  });

  it('normalizes vectors the server did not normalize', async () => {
    const [v] = await embedder().embed(['hello']);
    expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
  });

  it('does not send empty texts', async () => {
    const vectors = await embedder().embed(['', 'real text', '   ']);
    expect(vectors).toHaveLength(3);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].body.input).toEqual(['real text']);
    expect(await embedder().embed(['', ''])).toHaveLength(2);
    expect(server.requests).toHaveLength(1);
  });

  it('sends the API key as a bearer token, and no authorization header without one', async () => {
    await embedder({ apiKey: 'sk-test-123' }).embed(['a']);
    await embedder().embed(['b']);
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-test-123');
    expect(server.requests[1].headers.authorization).toBeUndefined();
  });

  it('accepts a base URL with or without /v1 and trailing slashes', async () => {
    for (const suffix of ['', '/', '/v1', '/v1/']) await embedder({ baseUrl: server.baseUrl + suffix }).embed(['x']);
    expect(server.requests.map((r) => r.path)).toEqual(Array(4).fill('/v1/embeddings'));
    expect(embeddingsUrl('https://api.openai.com/v1')).toBe('https://api.openai.com/v1/embeddings');
    expect(embeddingsUrl('http://gateway/openai/')).toBe('http://gateway/openai/v1/embeddings');
  });

  it('retries a 500 and a 502 with backoff and then succeeds', async () => {
    server.nextReplies.push({ kind: 'status', status: 500 }, { kind: 'status', status: 502 });
    const vectors = await embedder().embed(['retry me']);
    expect(vectors).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it("retries a 429 after the server's Retry-After instead of its own backoff", async () => {
    server.nextReplies.push({ kind: 'status', status: 429, retryAfter: '0' });
    const started = Date.now();
    expect(await embedder({ retryBaseDelayMs: 20_000 }).embed(['throttled'])).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('gives up after maxRetries with a remote_failed error', async () => {
    server.nextReplies.push(...Array(4).fill({ kind: 'status', status: 503 }));
    await expect(embedder({ maxRetries: 3 }).embed(['x'])).rejects.toMatchObject({ code: 'remote_failed', message: expect.stringContaining('503') });
    expect(server.requests).toHaveLength(4);
  });

  it('does not retry a client error', async () => {
    server.nextReplies.push({ kind: 'status', status: 400 });
    await expect(embedder().embed(['x'])).rejects.toBeInstanceOf(EmbeddingError);
    expect(server.requests).toHaveLength(1);
  });

  it('times out a hanging request', async () => {
    server.nextReplies.push({ kind: 'hang' });
    const started = Date.now();
    await expect(embedder({ timeoutMs: 200, maxRetries: 0 }).embed(['x'])).rejects.toMatchObject({ code: 'remote_timeout' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('retries after a timeout', async () => {
    server.nextReplies.push({ kind: 'hang' });
    expect(await embedder({ timeoutMs: 200, maxRetries: 1 }).embed(['x'])).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('retries network errors (connection refused) and then fails', async () => {
    const closedPort = await unusedPort();
    const unreachable = new OpenAiCompatibleEmbedder({ baseUrl: `http://127.0.0.1:${closedPort}`, model: 'm', dimensions: 8, retryBaseDelayMs: 1, maxRetries: 2 });
    await expect(unreachable.embed(['x'])).rejects.toMatchObject({ code: 'remote_failed' });
  });

  it('rejects vectors of the wrong dimensions without retrying', async () => {
    server.nextReplies.push({ kind: 'wrong-dimensions' });
    await expect(embedder().embed(['x'])).rejects.toMatchObject({ code: 'bad_response', message: expect.stringContaining('33 dimensions') });
    expect(server.requests).toHaveLength(1);
  });

  it('sends dimensions only when asked to', async () => {
    await embedder().embed(['a']);
    await embedder({ requestDimensions: true }).embed(['b']);
    expect(server.requests[0].body.dimensions).toBeUndefined();
    expect(server.requests[1].body.dimensions).toBe(32);
  });

  it('knows the dimensions of common models, and requires them otherwise', () => {
    expect(new OpenAiCompatibleEmbedder({ baseUrl: 'http://x', model: 'text-embedding-3-small' }).dimensions).toBe(1536);
    expect(() => new OpenAiCompatibleEmbedder({ baseUrl: 'http://x', model: 'my-model' })).toThrow(/dimensions/);
    expect(embedder().modelId).toBe('openai-compatible:fake-embed:32d');
  });
});

async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
