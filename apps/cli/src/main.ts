import 'reflect-metadata';
import { runCli } from './cli';

// A reader that goes away early (`crs events read | head`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** Resolves once everything written so far has been handed to the OS (writes are flushed in order). */
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));

runCli(process.argv.slice(2), {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
  env: process.env,
  progress: Boolean(process.stderr.isTTY),
}).then(async (code) => {
  // Into a pipe, output is written asynchronously once the pipe is full: exiting at once would cut it short
  // (an auditor's `crs events read | jq` got a random part of the log, and exit status 0).
  await flushed(process.stdout);
  await flushed(process.stderr);
  process.exit(code);
});
