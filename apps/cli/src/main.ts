import 'reflect-metadata';
import { runCli } from './cli';

runCli(process.argv.slice(2), {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
  env: process.env,
  progress: Boolean(process.stderr.isTTY),
}).then((code) => process.exit(code));
