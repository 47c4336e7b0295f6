import 'reflect-metadata';
import { runCli } from './cli';

// A reader that goes away early (`crs events read | head`): stop writing, but let the command finish (its cleanup,
// its exit code), instead of exiting in the middle of a rebuild or masking what verify found.
let closed = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
  });
}

/** Resolves once everything written so far has been handed to the OS (writes are flushed in order). */
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => (closed ? resolve() : stream.write('', () => resolve())));

runCli(process.argv.slice(2), {
  out: (l) => void (closed || process.stdout.write(`${l}\n`)),
  err: (l) => void (closed || process.stderr.write(`${l}\n`)),
  env: process.env,
  progress: Boolean(process.stderr.isTTY),
}).then(async (code) => {
  // Into a pipe, output is written asynchronously once the pipe is full: exiting at once would cut it short
  // (an auditor's `crs events read | jq` would get a random part of the log, and exit status 0).
  await flushed(process.stdout);
  await flushed(process.stderr);
  process.exit(code);
});
