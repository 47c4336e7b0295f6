import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GloveSifEmbedder } from '@crs/embeddings/glove-sif.embedder';
import { LanceDbSearchIndex } from '@crs/search/lancedb-search-index';
import type { LeanCandidate } from '@crs/search/search-index.port';
import { distinctIds } from '@crs/bench/lib/stats';
import { loadScifact } from '@crs/bench/quality/datasets';
import { buildReplayIndex, rankQuery, REPLAY_INDEX, replayCandidates, replayNdcg, vectorPrfVariant } from '@crs/bench/quality/replay';

/** Smoke run of the offline SciFact replay (bench/quality/replay.main) on a small slice; no quality is asserted. */
const sorted = (list: LeanCandidate[]) => [...list].sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1));

describe('offline SciFact replay (bench/quality/replay, smoke)', () => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'crs-replay-smoke-'));
  const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 60_000 });
  const embedder = new GloveSifEmbedder();
  afterAll(async () => {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes with the service chunker, fetches the pool per query and ranks by the service fusion', async () => {
    const data = loadScifact(undefined, { docs: 60, queries: 8 });
    const chunks = await buildReplayIndex(index, embedder, data, 512);
    expect(chunks).toBeGreaterThanOrEqual(data.docs.length);
    expect(await buildReplayIndex(index, embedder, data, 512)).toBe(chunks); // reused, not re-ingested
    const queries = await replayCandidates(index, embedder, data.queries);
    expect(queries).toHaveLength(8);
    for (const q of queries) {
      expect(q.keyword.length).toBeGreaterThan(0);
      expect(q.vectorHits).toHaveLength(30); // max(30, 3 x 10), the service's pool for 10 results
      // alpha 0: the keyword engine's order (ties by chunk id, as fusion breaks them), a document at its best chunk;
      // (the lowest keyword score normalizes to 0 and ties with the vector-only candidates, so it is left out)
      const lowest = Math.min(...q.keyword.map((c) => c.score));
      const byKeyword = distinctIds(sorted(q.keyword.filter((c) => c.score > lowest)).slice(0, 10).map((c) => c.itemId));
      expect(rankQuery(q, 0).slice(0, byKeyword.length)).toEqual(byKeyword);
      // alpha 1: the vector engine's order
      expect(rankQuery(q, 1)).toEqual(distinctIds(sorted(q.vectorHits).slice(0, 10).map((c) => c.itemId)));
    }
    const ndcg = replayNdcg(queries, 0.2);
    expect(ndcg).toBeGreaterThan(0); // every query's relevant documents are in the slice
    expect(ndcg).toBeLessThanOrEqual(1);

    // exact cosine for every candidate at alpha 1 ranks the union by cosine to the query
    const prf = vectorPrfVariant(1, 0);
    await prf.prepare!({ index, embedder, indexName: REPLAY_INDEX }, queries);
    const q = queries[0];
    const union = [...new Map([...q.keyword, ...q.vectorHits].map((c) => [c.chunkId, c])).values()];
    const docs = await index.getChunks(REPLAY_INDEX, union.map((c) => c.chunkId));
    const cosine = (v: ArrayLike<number>) => Array.from(v).reduce((s, x, i) => s + x * q.vector[i], 0);
    const expected = distinctIds(docs.sort((a, b) => cosine(b.vector) - cosine(a.vector)).slice(0, 10).map((d) => d.itemId));
    expect(rankQuery(q, 1, prf)).toEqual(expected);
  });
});
