import type { Command } from 'commander';
import { PROJECTION_RUNNER } from '@crs/platform';
import type { CliContext } from '../cli-context';

/** `crs projections status`: one line per projection and processor. */
export function projectionsStatus(projections: Command, cli: CliContext): void {
  projections
    .command('status')
    .description('each projection and processor: checkpoint and lag behind the log')
    .action(async () => {
      const platform = await cli.platform();
      for (const s of await platform.get(PROJECTION_RUNNER).status()) {
        cli.io.out(`${s.name.padEnd(24)} ${s.kind.padEnd(10)} position ${String(s.position).padStart(8)}  head ${String(s.head).padStart(8)}  lag ${s.lag}${s.error ? `  error: ${s.error}` : ''}`);
      }
    });
}
