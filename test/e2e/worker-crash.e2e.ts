import type { Embedder } from '@crs/embeddings';
import { RuleBasedInference } from '@crs/ingestion/inference/rule-based.inference';
import { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, waitForStatus } from '../support/ingest';

/** A worker that dies mid-item: its embedder never answers in time, then fails. */
class DyingEmbedder implements Embedder {
  calls = 0;
  constructor(readonly modelId: string, readonly dimensions: number) {}
  async embed(): Promise<Float32Array[]> {
    this.calls++;
    await new Promise((r) => setTimeout(r, 2500));
    throw new Error('worker killed');
  }
}

describe('a worker killed mid-item', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('crash', { pipeline: { concurrency: 2, batchSize: 4, leaseMs: 800, maxAttempts: 3, pollMs: 50, chunkTokens: 256 } });
    await t.createDatabase('crashdb');
  });
  afterAll(async () => {
    await t.close();
  });

  it('leaves its items to be redone: none lost, no duplicate chunks or statuses', async () => {
    await t.pipeline.stop(); // only the doomed worker runs at first
    const dying = new DyingEmbedder(t.embedder.modelId, t.embedder.dimensions);
    const doomed = new IndexingPipeline(t.ds, t.store, t.blobs, dying, new RuleBasedInference(), t.runner, { info: () => undefined, error: () => undefined }, { ...t.config.pipeline, leaseMs: 800 });
    doomed.start();
    const memories = Array.from({ length: 6 }, (_, i) => ({ id: `k${i}`, text: `Crash test memory number ${i} about the kestrel nest ${i}.` }));
    await ingestMemories(t, 'crashdb', memories);
    for (let i = 0; i < 100 && dying.calls === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(dying.calls).toBeGreaterThan(0);
    // The doomed worker has moved items to processing (the read model catches up within moments).
    await waitForStatus(t, 'crashdb', memories.map((m) => m.id), ['processing', 'queued'], 5000);
    let mid: any;
    for (let i = 0; i < 100; i++) {
      mid = await t.request('GET', `/context/status?database=crashdb&${memories.map((m) => `ids=${m.id}`).join('&')}`);
      if (mid.body.data.statuses.some((s: any) => s.indexing_status === 'processing')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(mid.body.data.statuses.some((s: any) => s.indexing_status === 'processing')).toBe(true);

    // A healthy worker starts; the doomed one's leases expire and its items are redone.
    const healthy = new IndexingPipeline(t.ds, t.store, t.blobs, t.embedder, new RuleBasedInference(), t.runner, { info: () => undefined, error: () => undefined }, t.config.pipeline);
    healthy.start();
    await doomed.stop();
    await waitForStatus(t, 'crashdb', memories.map((m) => m.id), ['completed'], 30_000);
    await healthy.stop();

    const itemEvents = (await t.store.readAll()).filter((e) => e.type === 'StatusAdvanced' || e.type === 'ItemChunked' || e.type === 'GraphExtracted');
    const byKey = new Map<string, string[]>();
    const name = (e: (typeof itemEvents)[number]) => (e.type === 'ItemChunked' ? 'chunked' : e.type === 'GraphExtracted' ? 'graphed' : e.data.status);
    for (const e of itemEvents) byKey.set(e.data.itemKey, [...(byKey.get(e.data.itemKey) ?? []), name(e)]);
    expect(byKey.size).toBe(6);
    // processing recorded by the slow batch; chunked, graphed (graph_creation) and completed once, by the redo.
    for (const seq of byKey.values()) expect(seq).toEqual(['processing', 'chunked', 'graphed', 'completed']);

    const index = await t.search.indexName((await t.directory.find('default', 'crashdb'))!.id, 'memory');
    const chunks = await t.search.index.listChunks(index!, { limit: 100 });
    expect(chunks).toHaveLength(6);
    expect(new Set(chunks.map((c) => c.chunkId)).size).toBe(6);
    const q = await t.request('POST', '/query', { body: { database: 'crashdb', query: 'kestrel nest 3', type: 'memory', query_by: 'text' } });
    expect(q.body.data.chunks[0].id).toBe('k3');
  });
});
