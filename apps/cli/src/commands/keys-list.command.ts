import type { Command } from 'commander';
import { API_KEYS } from '@crs/platform';
import type { CliContext } from '../cli-context';

/** `crs keys list [--org <org>]`: one JSON line per key. */
export function keysList(keys: Command, cli: CliContext): void {
  keys
    .command('list')
    .description('list the keys (never their secrets)')
    .option('--org <org>', 'only this organization')
    .action(async (o: { org?: string }) => {
      const platform = await cli.platform();
      for (const k of await platform.get(API_KEYS).list(o.org)) {
        cli.io.out(JSON.stringify({ prefix: k.prefix, org: k.orgId, databases: k.databases ?? 'all', label: k.label, created_at: k.createdAt, revoked_at: k.revokedAt }));
      }
    });
}
