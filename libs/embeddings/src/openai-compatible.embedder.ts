import { EmbeddingError, type Embedder } from './embedder.port';
import { emptyTextVector, isZero, normalizeInPlace } from './unit-vector';

export interface OpenAiCompatibleEmbedderOptions {
  /** Server root, with or without a trailing `/v1` (e.g. `https://api.openai.com`, `http://localhost:11434/v1`). */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string;
  /** Vector length the model returns. Required unless the model is in KNOWN_DIMENSIONS. */
  dimensions?: number;
  /** Also send `dimensions` in the request body (OpenAI text-embedding-3 models can shorten vectors). Default false. */
  requestDimensions?: boolean;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Retries after the first attempt, on 408/429/5xx, network errors and timeouts. Default 3. */
  maxRetries?: number;
  /** First retry delay; doubles each retry (with jitter), capped by retryMaxDelayMs. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts, also the cap on a server's Retry-After. Default 10 s. */
  retryMaxDelayMs?: number;
  /** Per-request timeout, response body included. Default 30 s. */
  timeoutMs?: number;
  /** Injected for tests; default the global fetch. */
  fetch?: typeof fetch;
}

/** Dimensions of common embedding models, so most configurations need not state them. */
export const KNOWN_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'bge-m3': 1024,
  'snowflake-arctic-embed': 1024,
};

interface EmbeddingsResponse {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

/**
 * Any server speaking OpenAI's `POST /v1/embeddings` (OpenAI, Azure-compatible gateways, Ollama, vLLM, LM Studio…).
 * Batches sequentially, retries transient failures with exponential backoff, times out each request, re-orders
 * results by `index` and checks every vector's length. Vectors are re-normalized (not every server does it).
 * Empty texts are not sent (OpenAI rejects them): they get the port's empty-text vector.
 */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  private readonly url: string;
  private readonly batchSize: number;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: OpenAiCompatibleEmbedderOptions) {
    if (!options.baseUrl) throw new EmbeddingError('OpenAI-compatible embedder: baseUrl is required', 'bad_config');
    if (!options.model) throw new EmbeddingError('OpenAI-compatible embedder: model is required', 'bad_config');
    const dimensions = options.dimensions ?? KNOWN_DIMENSIONS[options.model];
    if (!dimensions) {
      throw new EmbeddingError(`OpenAI-compatible embedder: unknown dimensions for model "${options.model}"; set dimensions`, 'bad_config');
    }
    this.dimensions = dimensions;
    this.modelId = `openai-compatible:${options.model}:${dimensions}d`;
    this.url = embeddingsUrl(options.baseUrl);
    this.batchSize = positiveInteger('batchSize', options.batchSize ?? 64);
    this.maxRetries = nonNegativeInteger('maxRetries', options.maxRetries ?? 3);
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 500;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? 10_000;
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? 30_000);
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    const toSend: number[] = [];
    texts.forEach((text, i) => (text.trim() === '' ? (out[i] = emptyTextVector(this.dimensions)) : toSend.push(i)));
    for (let start = 0; start < toSend.length; start += this.batchSize) {
      const batch = toSend.slice(start, start + this.batchSize);
      const vectors = await this.requestWithRetries(batch.map((i) => texts[i]));
      batch.forEach((textIndex, k) => (out[textIndex] = vectors[k]));
    }
    return out;
  }

  private async requestWithRetries(input: string[]): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      const result = await this.requestOnce(input);
      if (result.ok) return result.vectors;
      if (!result.retryable || attempt >= this.maxRetries) throw result.error;
      await sleep(this.retryDelay(attempt, result.retryAfterMs));
    }
  }

  private retryDelay(attempt: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) return Math.min(retryAfterMs, this.retryMaxDelayMs);
    const exponential = this.retryBaseDelayMs * 2 ** attempt;
    // Jitter (50..100 %) so many workers throttled together do not retry in lockstep.
    return Math.min(exponential * (0.5 + Math.random() / 2), this.retryMaxDelayMs);
  }

  private async requestOnce(input: string[]): Promise<AttemptResult> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const body: Record<string, unknown> = { model: this.options.model, input };
    if (this.options.requestDimensions) body.dimensions = this.dimensions;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      const response = await this.fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
      const text = await response.text();
      if (!response.ok) {
        const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
        const error = new EmbeddingError(`POST ${this.url} failed: HTTP ${response.status} ${text.slice(0, 300)}`, 'remote_failed');
        return { ok: false, retryable, error, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
      }
      return { ok: true, vectors: this.parse(text, input.length) };
    } catch (error) {
      if (error instanceof EmbeddingError) return { ok: false, retryable: false, error };
      if (controller.signal.aborted) {
        const timeout = new EmbeddingError(`POST ${this.url} timed out after ${this.timeoutMs} ms`, 'remote_timeout', { cause: error });
        return { ok: false, retryable: true, error: timeout };
      }
      // fetch rejects (TypeError "fetch failed") on refused/reset connections and DNS failures.
      return { ok: false, retryable: true, error: new EmbeddingError(`POST ${this.url} failed: ${String(error)}`, 'remote_failed', { cause: error }) };
    } finally {
      clearTimeout(timer);
    }
  }

  private parse(text: string, expected: number): Float32Array[] {
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new EmbeddingError(`POST ${this.url}: response is not JSON`, 'bad_response');
    }
    const data = parsed.data;
    if (!Array.isArray(data) || data.length !== expected) {
      throw new EmbeddingError(`POST ${this.url}: expected ${expected} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`, 'bad_response');
    }
    const out: Float32Array[] = new Array(expected);
    data.forEach((item, position) => {
      const index = item.index ?? position;
      if (!Number.isInteger(index) || index < 0 || index >= expected || out[index]) {
        throw new EmbeddingError(`POST ${this.url}: bad or duplicate index ${index}`, 'bad_response');
      }
      const embedding = item.embedding;
      if (!Array.isArray(embedding) || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new EmbeddingError(`POST ${this.url}: embedding ${index} is not an array of numbers`, 'bad_response');
      }
      if (embedding.length !== this.dimensions) {
        throw new EmbeddingError(
          `POST ${this.url}: embedding ${index} has ${embedding.length} dimensions, expected ${this.dimensions} (model ${this.options.model})`,
          'bad_response',
        );
      }
      const vector = Float32Array.from(embedding as number[]);
      out[index] = isZero(vector) ? emptyTextVector(this.dimensions) : normalizeInPlace(vector);
    });
    return out;
  }
}

type AttemptResult =
  | { ok: true; vectors: Float32Array[] }
  | { ok: false; retryable: boolean; error: EmbeddingError; retryAfterMs?: number };

/** `http://h/`, `http://h/v1`, `http://h/v1/` all give `http://h/v1/embeddings`. */
export function embeddingsUrl(baseUrl: string): string {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${root}/v1/embeddings`;
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new EmbeddingError(`${name} must be a positive integer`, 'bad_config');
  return value;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new EmbeddingError(`${name} must be a non-negative integer`, 'bad_config');
  return value;
}
