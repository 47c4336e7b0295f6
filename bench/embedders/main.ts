import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createEmbedder, type EmbedderProvider } from '@crs/embeddings';
import { parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { DEFAULT_DATA_DIR, loadLocomo, loadScifact } from '../quality/datasets';
import { embeddersMarkdown, loadEmbedder, measureLocomo, measureScifact, type EmbedderRun, type EmbeddersReport } from './run-embedders';

const PROVIDERS: EmbedderProvider[] = ['glove', 'use'];

const USAGE = `npm run bench:embedders -- [options]
  --embedder glove,use       offline embedders to measure, in this process (default glove,use)
  --dataset scifact|locomo|all (default all)
  --limit <n>                throughput only, on the first n SciFact documents and n turns of each LoCoMo conversation
  --batch <n>                texts per embed() call (default 64, the pipeline's PIPELINE_BATCH_SIZE)
  --data-dir <dir>           benchmark data (default ${DEFAULT_DATA_DIR})
  --out <dir>                where results go (default bench/results)
  --name <name>              result file base name (default embedders)`;

/**
 * The offline embedders alone, without the service: texts/s in pipeline-sized batches, and vector-only quality by
 * exact cosine (SciFact nDCG@10, LoCoMo dev R@k). GloVe takes well under a minute; use --limit for slow models.
 */
async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { embedder: 'string', dataset: 'string', limit: 'string', batch: 'string', 'data-dir': 'string', out: 'string', name: 'string', help: 'boolean' });
  if (args.help) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const providers = String(args.embedder ?? PROVIDERS.join(',')).split(',') as EmbedderProvider[];
  for (const p of providers) if (!PROVIDERS.includes(p)) throw new Error(`unknown embedder ${p} (${PROVIDERS.join(', ')})`);
  const dataset = String(args.dataset ?? 'all');
  if (!['scifact', 'locomo', 'all'].includes(dataset)) throw new Error(`unknown dataset ${dataset}`);
  const limit = args.limit === undefined ? null : Number(args.limit);
  if (limit !== null && !(Number.isInteger(limit) && limit > 0)) throw new Error('--limit must be a positive integer');
  const batch = Number(args.batch ?? 64);
  if (!(Number.isInteger(batch) && batch > 0)) throw new Error('--batch must be a positive integer');
  const dataDir = String(args['data-dir'] ?? DEFAULT_DATA_DIR);
  if (resolve(dataDir).includes('holdout')) throw new Error('the holdout data is never used for benchmarking or tuning');
  const outDir = resolve(String(args.out ?? join(root, 'bench/results')));
  const name = String(args.name ?? 'embedders');

  const environment = runEnvironment(root);
  const scifact = dataset === 'locomo' ? undefined : loadScifact(dataDir);
  if (scifact && limit !== null) scifact.docs = scifact.docs.slice(0, limit);
  const locomo = dataset === 'scifact' ? undefined : loadLocomo(dataDir).map((c) => (limit === null ? c : { ...c, turns: c.turns.slice(0, limit) }));
  const opts = { batch, quality: limit === null, log };

  const runs: EmbedderRun[] = [];
  for (const provider of providers) {
    const embedder = createEmbedder({ provider });
    const loadMs = await loadEmbedder(embedder);
    log(`${provider} (${embedder.modelId}): loaded in ${loadMs} ms`);
    const run: EmbedderRun = { provider, modelId: embedder.modelId, dimensions: embedder.dimensions, loadMs, results: [] };
    if (scifact) run.results.push(await measureScifact(embedder, scifact, opts));
    if (locomo) run.results.push(await measureLocomo(embedder, locomo, opts));
    runs.push(run);
  }
  const report: EmbeddersReport = { environment, batch, limit, runs };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, `${name}.json`), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(outDir, `${name}.md`), embeddersMarkdown(report));
  log(`wrote ${join(outDir, `${name}.md`)}`);
}

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
