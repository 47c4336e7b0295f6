import type { Command } from 'commander';
import { assertDatabaseName } from '@crs/domain/names';
import { API_KEYS } from '@crs/platform';
import type { CliContext } from '../cli-context';

/** `crs keys create --org <org> [--databases a,b] [--label x]`: prints the key once on stdout, a note on stderr. */
export function keysCreate(keys: Command, cli: CliContext): void {
  keys
    .command('create')
    .description('create a key and print its secret once')
    .requiredOption('--org <org>', 'organization id (created if new)')
    .option('--databases <names>', 'comma-separated databases the key may reach (default: all of the organization)')
    .option('--label <label>', 'a note to recognise the key by')
    .action(async (o: { org: string; databases?: string; label?: string }) => {
      const platform = await cli.platform();
      // Given, the option must name databases: an empty value (an unset shell variable) must not mean all of them.
      const databases = o.databases === undefined ? null : o.databases.split(',').map((s) => s.trim()).filter(Boolean);
      if (databases && !databases.length) throw new Error('--databases names no database; leave the option out for a key that reaches every database of the organization');
      for (const name of databases ?? []) assertDatabaseName(name, `--databases entry '${name}'`);
      const { key, record } = await platform.get(API_KEYS).create(o.org, { databases, label: o.label });
      cli.io.out(key);
      cli.io.err(`Created key ${record.prefix} for organization ${record.orgId} (${databases ? `databases: ${databases.join(', ')}` : 'all databases'}). The secret is shown only this once.`);
    });
}
