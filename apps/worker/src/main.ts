import 'reflect-metadata';
import pino from 'pino';
import { ConfigurationError, configFromEnv } from '@crs/config';
import { openPlatform, PROJECTION_RUNNER } from '@crs/platform';

/**
 * The worker role on its own (production topology): runs every projection and processor, no HTTP.
 * In single-node mode (`npm start`) the API process runs the same runner itself.
 */
async function main(): Promise<void> {
  const config = configFromEnv(process.env);
  if (!config.databaseUrl) throw new ConfigurationError('the standalone worker needs DATABASE_URL (npm start runs the worker inside the API instead)');
  const logger = pino({ level: config.logLevel, base: { service: 'crs-worker' } });
  const platform = await openPlatform(config, { info: (o, m) => logger.info(o, m), error: (o, m) => logger.error(o, m) });
  platform.startWorker();
  logger.info({ subscribers: platform.get(PROJECTION_RUNNER).subscribers.map((s) => s.name) }, 'worker running');
  const stop = async () => {
    await platform.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err) => {
  console.error(err instanceof ConfigurationError ? err.message : err);
  process.exit(1);
});
