import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadGloveAsset } from '@crs/embeddings/glove-asset';
import { GloveSifEmbedder } from '@crs/embeddings/glove-sif.embedder';
import { tokenizeEnglish } from '@crs/embeddings/english-tokenizer';
import { sifWeight, zipfNormalizer } from '@crs/embeddings/sif-weighting';
import { LanceDbSearchIndex } from '@crs/search/lancedb-search-index';
import { numberList, parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { DEFAULT_DATA_DIR, loadScifact } from './datasets';
import { buildReplayIndex, REPLAY_INDEX, replayCandidates, replayNdcg, softMatchVariant, vectorPrfVariant, type ReplayVariant } from './replay';

const USAGE = `node dist/bench/quality/replay.main.js [options]
Offline replay of fast-mode SciFact retrieval (the service's chunker, GloVe embedder, LanceDB index class, pool and
fusion; no HTTP): nDCG@10 on the train (dev) and test queries for the baseline and the re-ranking variants of
bench/quality/replay.ts. Tune on train; test is only reported.
  --alphas 0,0.2           fusion alphas (default 0,0.1,0.2,0.3)
  --chunk-tokens 512       chunk size (the service's CHUNK_TOKENS default)
  --vocabulary 50000       GloVe words kept (another size is another vector space)
  --variants all|none      the re-ranking variants too (default all)
  --dir <dir>              keep the index there and reuse it (default: a temporary directory, removed)`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { alphas: 'string', 'chunk-tokens': 'string', vocabulary: 'string', variants: 'string', dir: 'string', help: 'boolean' });
  if (args.help) return void console.log(USAGE);
  const alphas = numberList(String(args.alphas ?? '0,0.1,0.2,0.3'));
  const chunkTokens = Number(args['chunk-tokens'] ?? 512);
  const vocabularySize = Number(args.vocabulary ?? 50_000);
  const withVariants = String(args.variants ?? 'all') === 'all';
  const dir = args.dir ? resolve(String(args.dir)) : mkdtempSync(join(tmpdir(), 'crs-replay-'));
  const env = runEnvironment(resolve(__dirname, '../../..'));
  console.log(`replay: commit ${env.commit.slice(0, 12)}${env.dirty ? ' (dirty)' : ''}, chunk tokens ${chunkTokens}, GloVe ${vocabularySize} words, index ${dir}`);

  const embedder = new GloveSifEmbedder({ vocabularySize });
  const index = new LanceDbSearchIndex({ dir });
  try {
    const train = loadScifact(DEFAULT_DATA_DIR, undefined, 'train');
    const test = loadScifact(DEFAULT_DATA_DIR, undefined, 'test');
    const chunks = await buildReplayIndex(index, embedder, test, chunkTokens);
    const splits = { train: await replayCandidates(index, embedder, train.queries), test: await replayCandidates(index, embedder, test.queries) };
    console.log(`${test.docs.length} documents, ${chunks} chunks; ${train.queries.length} train and ${test.queries.length} test queries`);

    const variants: (ReplayVariant | undefined)[] = [undefined];
    if (withVariants) {
      const asset = await loadGloveAsset({ vocabularySize });
      const normalizer = zipfNormalizer(asset.sourceVocabularySize);
      const unit = (i: number) => {
        const v = Float32Array.from(asset.vectors.subarray(i * asset.dimensions, (i + 1) * asset.dimensions));
        const n = Math.hypot(...v) || 1;
        return v.map((x) => x / n);
      };
      const units = new Map<number, Float32Array>();
      const unitOf = (i: number) => units.get(i) ?? (units.set(i, unit(i)), units.get(i)!);
      const similarity = (word: string, words: string[]) => {
        if (words.includes(word)) return 1;
        const i = asset.index.get(word);
        if (i === undefined) return 0;
        let best = 0;
        for (const w of words) {
          const j = asset.index.get(w);
          if (j === undefined) continue;
          const a = unitOf(i);
          const b = unitOf(j);
          let c = 0;
          for (let k = 0; k < a.length; k++) c += a[k] * b[k];
          if (c > best) best = c;
        }
        return best;
      };
      const weight = (word: string) => {
        const i = asset.index.get(word);
        return i === undefined ? 1 : sifWeight(asset.ranks[i], normalizer);
      };
      variants.push(vectorPrfVariant(1, 0), vectorPrfVariant(3, 0.5), vectorPrfVariant(3, 1), softMatchVariant(0.1, tokenizeEnglish, similarity, weight), softMatchVariant(0.2, tokenizeEnglish, similarity, weight));
      for (const v of variants) await v?.prepare?.({ index, embedder, indexName: REPLAY_INDEX }, [...splits.train, ...splits.test]);
    }
    console.log(`\n| variant | alpha | train nDCG@10 | test nDCG@10 |\n| --- | --- | --- | --- |`);
    for (const variant of variants) {
      for (const alpha of alphas) {
        console.log(`| ${variant?.name ?? 'baseline (the service)'} | ${alpha} | ${replayNdcg(splits.train, alpha, variant).toFixed(4)} | ${replayNdcg(splits.test, alpha, variant).toFixed(4)} |`);
      }
    }
  } finally {
    await index.close();
    if (!args.dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
