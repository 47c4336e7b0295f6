import 'reflect-metadata';
import { startEmbeddedPostgres } from '@crs/persistence/embedded-postgres';
import { createApp } from './app.factory';
import { ConfigurationError, configFromEnv } from '@crs/config';

/**
 * `npm start`: the API on PORT (8080) with the worker in the same process. Without DATABASE_URL it starts
 * a real Postgres from the embedded-postgres package under DATA_DIR (./.data) and reuses it on restart.
 */
async function main(): Promise<void> {
  let config = configFromEnv(process.env);
  let stopPostgres: (() => Promise<void>) | undefined;
  if (!config.databaseUrl) {
    console.log(`Starting embedded Postgres under ${config.dataDir}/postgres ...`);
    const pg = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      log: config.logLevel === 'debug' ? (l) => console.log(l) : undefined,
      statStatements: config.postgresStatStatements,
      onUnexpectedExit: ({ code, signal }) => console.error(`embedded Postgres exited unexpectedly (${signal ?? `code ${code}`}); restarting it`),
      onRestarted: (attempt) => console.error(`embedded Postgres restarted (attempt ${attempt})`),
      onGiveUp: (err) => {
        // Nothing can be served without it: exit, so a supervisor (or the operator) starts the service again.
        console.error(`embedded Postgres could not be restarted (${err.message}); exiting`);
        process.exit(1);
      },
    });
    config = { ...config, databaseUrl: pg.url };
    stopPostgres = () => pg.stop();
  }
  const { app, close } = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  const shown = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  console.log(`Context Retrieval Service listening on http://${shown}:${config.port} (API docs: http://${shown}:${config.port}/docs)`);
  console.log(
    config.bootstrapApiKey
      ? 'API key: the BOOTSTRAP_API_KEY you set (organization "default").'
      : 'Get an API key: npm run crs -- keys create --org default   (or start with BOOTSTRAP_API_KEY=<prefix>.<secret>)',
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    await close().catch((e) => console.error(e));
    await stopPostgres?.().catch((e) => console.error(e));
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  // A setting given wrongly: its message says which and what it accepts; a stack trace would only bury it.
  console.error(err instanceof ConfigurationError ? err.message : err);
  process.exit(1);
});
