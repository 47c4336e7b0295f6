import { startFloorServer } from './floor';

/** Child-process entry of the floor server: argv[2] is JSON {lanceDir?, tables?}; prints "floor listening on <url>". */
async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}');
  const server = await startFloorServer(opts);
  console.log(`floor listening on ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
