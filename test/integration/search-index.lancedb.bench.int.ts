import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChunkDoc, LanceDbSearchIndex, type SearchFilter, type SearchIndex } from '@crs/search';
import { seededRandom } from './search-index.contract';

/**
 * Latency of the embedded engine on ~20k random 100-d chunks (p50/p95 over 100 queries).
 * Opt-in, it takes about a minute: SEARCH_BENCH=1 npx jest test/integration/search-index.lancedb.bench.int.ts
 */
const enabled = process.env.SEARCH_BENCH === '1';
const N = Number(process.env.SEARCH_BENCH_ROWS ?? 20_000);
const DIMS = 100;
const QUERIES = 100;

const random = seededRandom(2024);
const syllables = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'ri', 'po', 'ge', 'vu', 'da', 'zo', 'be', 'fi', 'ha', 'ju'];
const vocabulary = Array.from({ length: 3000 }, (_, i) => {
  let word = '';
  for (let n = i + 17; word.length < 6 || n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
  return word;
});
/** Zipf-like: a few words are very common, most are rare, as in real text. */
const word = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)];
const vector = () => Array.from({ length: DIMS }, () => random() * 2 - 1);

function makeDoc(i: number): ChunkDoc {
  return {
    chunkId: `b_${String(i).padStart(6, '0')}`,
    itemId: `item_${Math.floor(i / 8)}`,
    store: i % 5 === 0 ? 'memory' : 'knowledge',
    collection: `col${i % 10}`,
    title: i % 4 === 0 ? `title ${word()} ${word()}` : null,
    text: Array.from({ length: 60 }, word).join(' '),
    vector: vector(),
    principals: i % 3 === 0 ? null : [`user${i % 50}`, `group${i % 7}`],
    metadata: { lang: i % 2 ? 'en' : 'de', year: 2000 + (i % 25) },
    additionalMetadata: { connector_id: `conn${i % 4}` },
    sourceType: 'file',
    isApp: i % 6 === 0,
    createdAt: 1_700_000_000_000 + i,
    updatedAt: 1_700_000_000_000 + i,
    expiresAt: i % 10 === 0 ? 1_700_000_000_000 + i : null,
    version: 1,
  };
}

const filter: SearchFilter = {
  collections: ['col1', 'col2', 'col3'],
  principalsAny: ['user1', 'user2', 'group3'],
  now: 1_700_000_010_000,
  includeApps: false,
  metadata: { lang: 'en' },
};

async function p50p95(run: (i: number) => Promise<unknown>): Promise<string> {
  await run(-1); // warm-up
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const started = process.hrtime.bigint();
    await run(i);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  return `p50 ${times[Math.floor(QUERIES / 2)].toFixed(2)} ms, p95 ${times[Math.floor(QUERIES * 0.95)].toFixed(2)} ms`;
}

(enabled ? describe : describe.skip)(`LanceDB search latency on ${N} random ${DIMS}-d chunks (SEARCH_BENCH=1)`, () => {
  jest.setTimeout(600_000);
  let dir: string | undefined;
  const report: string[] = [];
  let index: SearchIndex;
  const keywordQueries = Array.from({ length: QUERIES }, () => `${word()} ${word()} ${word()}`);
  const vectorQueries = Array.from({ length: QUERIES }, vector);

  afterAll(async () => {
    await index?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    console.log(report.join('\n'));
  });

  async function measure(label: string): Promise<void> {
    const q = (i: number) => keywordQueries[Math.max(i, 0)];
    const v = (i: number) => vectorQueries[Math.max(i, 0)];
    report.push(`${label} keyword or:             ${await p50p95((i) => index.keywordSearch('bench', q(i), { limit: 20 }))}`);
    report.push(`${label} keyword or + filter:    ${await p50p95((i) => index.keywordSearch('bench', q(i), { limit: 20, filter }))}`);
    report.push(`${label} keyword and:            ${await p50p95((i) => index.keywordSearch('bench', q(i), { limit: 20, operator: 'and' }))}`);
    report.push(
      `${label} keyword phrase:         ${await p50p95((i) => index.keywordSearch('bench', q(i).split(' ').slice(0, 2).join(' '), { limit: 20, operator: 'phrase' }))}`,
    );
    report.push(`${label} vector:                 ${await p50p95((i) => index.vectorSearch('bench', v(i), { limit: 20 }))}`);
    report.push(`${label} vector + filter:        ${await p50p95((i) => index.vectorSearch('bench', v(i), { limit: 20, filter }))}`);
  }

  it('measures', async () => {
    dir = mkdtempSync(join(tmpdir(), 'crs-lance-bench-'));
    index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, vectorIndexThreshold: 0 });
    await index.createIndex('bench', { dimensions: DIMS });
    const docs = Array.from({ length: N }, (_, i) => makeDoc(i));
    let started = Date.now();
    for (let start = 0; start < N; start += 1000) await index.upsert('bench', docs.slice(start, start + 1000));
    report.push(`upsert ${N} chunks in batches of 1000: ${Date.now() - started} ms`);
    started = Date.now();
    await index.optimize('bench');
    report.push(`optimize (compaction + FTS index): ${Date.now() - started} ms`);
    expect(await index.count('bench')).toBe(N);
    report.push(`matching the filter: ${await index.count('bench', filter)} of ${N}`);
    await measure('[exact, indexed FTS]');

    // The same table with an IVF_FLAT vector index (what tables past vectorIndexThreshold get).
    await index.close();
    index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, vectorIndexThreshold: 1 });
    started = Date.now();
    await index.optimize('bench');
    report.push(`optimize + IVF_FLAT build: ${Date.now() - started} ms`);
    let recall = 0;
    const everything = await index.listChunks('bench');
    for (const q of vectorQueries.slice(0, 20)) {
      const ann = await index.vectorSearch('bench', q, { limit: 10 });
      const bruteForce = everything
        .map((d) => ({ id: d.chunkId, s: cosine(d.vector, q) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 10)
        .map((d) => d.id);
      recall += ann.filter((c) => bruteForce.includes(c.chunkId)).length / 10;
    }
    report.push(`IVF_FLAT recall@10 (default probes) over 20 queries: ${(recall / 20).toFixed(3)}`);
    await measure('[IVF_FLAT]');

    // A fresh bulk not yet folded into the FTS index (the state right after a burst of writes).
    for (let start = N; start < N + 2000; start += 1000) {
      await index.upsert('bench', Array.from({ length: 1000 }, (_, j) => makeDoc(start + j)));
    }
    report.push(
      `[2000 unindexed rows] keyword or: ${await p50p95((i) => index.keywordSearch('bench', keywordQueries[Math.max(i, 0)], { limit: 20 }))}`,
    );
  });
});

function cosine(a: Float32Array | number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < b.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}
