import { configFromEnv } from '@crs/config';
import { startEmbeddedPostgres } from '@crs/persistence/embedded-postgres';
import { openPlatform, type Platform } from '@crs/platform';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  /** show progress bars (off when not a terminal, and in tests) */
  progress: boolean;
}

/**
 * What every command runs with: its output, the exit code it sets, and the platform (the same ports and components
 * as the API: DATABASE_URL, or the embedded Postgres under DATA_DIR, attached when the server is running), opened
 * on first use so a command line that does not parse opens nothing.
 */
export class CliContext {
  /** 0 unless a command found what it reports as a failure (an unknown key, a verify that differs, ...). */
  exitCode = 0;
  private opened: Platform | undefined;
  private stopPostgres: (() => Promise<void>) | undefined;

  constructor(readonly io: CliIo) {}

  async platform(): Promise<Platform> {
    if (this.opened) return this.opened;
    let config = configFromEnv(this.io.env);
    if (!config.databaseUrl) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'cli' });
      config = { ...config, databaseUrl: pg.url };
      this.stopPostgres = () => pg.stop();
    }
    this.opened = await openPlatform(config, { info: () => undefined, error: (o) => this.io.err(JSON.stringify(o)) });
    return this.opened;
  }

  async close(): Promise<void> {
    await this.opened?.close();
    await this.stopPostgres?.();
  }
}
