import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { createProgress } from '../lib/progress';
import { providersMarkdown, runProvider, type ProviderResult } from './run-providers';
import { SOURCE_NAMES, type SourceName } from './sources';

const USAGE = `npm run bench:providers -- [options]
  --docs 10000         documents in the one resource each provider syncs
  --providers a,b      some of ${SOURCE_NAMES.join(',')} (default all)
  --cap-seconds 240    how long one provider may take to make every document searchable
  --out <dir>          where results go (default bench/results)`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { docs: 'string', providers: 'string', 'cap-seconds': 'string', out: 'string', help: 'boolean' });
  if (args.help) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const docs = Number(args.docs ?? 10_000);
  const capMs = Number(args['cap-seconds'] ?? 240) * 1000;
  const names = (args.providers ? String(args.providers).split(',').map((s) => s.trim()) : SOURCE_NAMES) as SourceName[];
  const unknown = names.filter((n) => !SOURCE_NAMES.includes(n));
  if (unknown.length) throw new Error(`unknown provider ${unknown.join(', ')} (known: ${SOURCE_NAMES.join(', ')})`);
  if (!Number.isInteger(docs) || docs < 1) throw new Error('--docs must be a whole number of at least 1');
  const outDir = resolve(String(args.out ?? join(root, 'bench/results')));
  const environment = runEnvironment(root);
  const progress = createProgress();
  const results: ProviderResult[] = [];
  for (const name of names) results.push(await runProvider(name, docs, capMs, progress));
  progress.stop();
  const json = { environment, configuration: { docs, capSeconds: capMs / 1000, embedder: 'glove (default)' }, results };
  writeFileSync(join(outDir, 'connector-providers.json'), JSON.stringify(json, null, 2) + '\n');
  writeFileSync(join(outDir, 'connector-providers.md'), providersMarkdown(environment, docs, capMs, results));
  console.log(providersMarkdown(environment, docs, capMs, results));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
