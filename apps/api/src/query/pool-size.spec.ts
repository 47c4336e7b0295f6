import { StepClock } from '@crs/domain/step-clock';
import { configFromEnv, type AppConfig } from '@crs/config';
import type { DataSource } from 'typeorm';
import type { Embedder } from '@crs/embeddings';
import type { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import type { SearchIndex } from '@crs/search/search-index.port';
import type { BlobStore } from '@crs/persistence/blob-store';
import { candidatePool, POOL_DEFAULTS } from '@crs/domain/retrieval/pool-size';
import { RetrievalService } from './retrieval.service';

/** The pool the configuration reads from these variables. */
const poolSize = (env: NodeJS.ProcessEnv) => configFromEnv(env, 'postgres://spec').retrieval.pool;

describe('retrieval candidate pool', () => {
  it('defaults to max(30, 3 × limit) and takes RETRIEVAL_POOL_MIN / _FACTOR', () => {
    expect(poolSize({})).toEqual(POOL_DEFAULTS);
    expect(POOL_DEFAULTS).toEqual({ min: 30, factor: 3 });
    expect([1, 10, 11, 100].map((limit) => candidatePool(POOL_DEFAULTS, limit))).toEqual([30, 30, 33, 300]);
    expect(poolSize({ RETRIEVAL_POOL_MIN: '30', RETRIEVAL_POOL_FACTOR: '2.5' })).toEqual({ min: 30, factor: 2.5 });
    expect(poolSize({ RETRIEVAL_POOL_MIN: ' ' })).toEqual(POOL_DEFAULTS);
  });

  it('refuses values out of range or not numbers', () => {
    for (const bad of ['0', '-5', '1.5', '1001', 'many']) expect(() => poolSize({ RETRIEVAL_POOL_MIN: bad })).toThrow(/RETRIEVAL_POOL_MIN/);
    for (const bad of ['0.5', '21', 'NaN', 'x']) expect(() => poolSize({ RETRIEVAL_POOL_FACTOR: bad })).toThrow(/RETRIEVAL_POOL_FACTOR/);
  });

  it('asks every engine call for max(min, factor × limit) lean candidates', async () => {
    const limits: string[] = [];
    const index = {
      keywordSearch: async (_i: string, _q: string, o: { limit: number; fields?: string }) => (limits.push(`keyword ${o.limit} ${o.fields}`), []),
      vectorSearch: async (_i: string, _v: unknown, o: { limit: number; fields?: string }) => (limits.push(`vector ${o.limit} ${o.fields}`), []),
    };
    const embedder = { embed: async (texts: string[]) => texts.map(() => Float32Array.from([1, 0])) } as unknown as Embedder;
    const catalog = { entry: async () => ({ name: 'idx', modelId: null, dimensions: 2 }) } as unknown as SearchCatalog;
    const retrieval = (config: AppConfig) => {
      const service = new RetrievalService(undefined as unknown as DataSource, embedder, catalog, index as unknown as SearchIndex, undefined as unknown as BlobStore, new StepClock(), config);
      jest.spyOn(service.facets, 'of').mockResolvedValue(new Map());
      return service;
    };
    const ask = async (limit: number, service = retrieval(configFromEnv({}, 'postgres://spec'))) => {
      limits.length = 0;
      await service.retrieve({ databaseId: 'db', stores: ['knowledge'], query: 'q', vectorText: 'q', limit, alpha: 0.5, caller: null, includeApps: true, recencyBias: 0 });
      return [...limits].sort();
    };
    expect(await ask(10)).toEqual(['keyword 30 lean', 'vector 30 lean']);
    expect(await ask(20)).toEqual(['keyword 60 lean', 'vector 60 lean']);
    const tuned = retrieval(configFromEnv({ RETRIEVAL_POOL_MIN: '50', RETRIEVAL_POOL_FACTOR: '2.5' }, 'postgres://spec'));
    expect(await ask(10, tuned)).toEqual(['keyword 50 lean', 'vector 50 lean']);
    expect(await ask(25, tuned)).toEqual(['keyword 63 lean', 'vector 63 lean']);
  });
});
