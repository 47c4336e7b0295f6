import type { Command } from 'commander';
import { API_KEYS } from '@crs/platform';
import type { CliContext } from '../cli-context';

/** `crs keys revoke <prefix>`: exit code 1 when no active key has that prefix. */
export function keysRevoke(keys: Command, cli: CliContext): void {
  keys
    .command('revoke <prefix>')
    .description('revoke a key: refused from its next request')
    .action(async (prefix: string) => {
      const platform = await cli.platform();
      if (await platform.get(API_KEYS).revoke(prefix)) cli.io.out(`revoked ${prefix}`);
      else {
        cli.io.err(`no active key with prefix ${prefix}`);
        cli.exitCode = 1;
      }
    });
}
