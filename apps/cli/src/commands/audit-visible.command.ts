import type { Command } from 'commander';
import { DATA_SOURCE, EVENT_STORE } from '@crs/platform';
import { visibleAt } from '../audit';
import type { CliContext } from '../cli-context';
import { databaseIdOf } from '../database-argument';

/** `crs audit visible <item-id> --database <name-or-id> --principal <p>...`: the verdict as one JSON line. */
export function auditVisible(audit: Command, cli: CliContext): void {
  audit
    .command('visible <item-id>')
    .description('could a principal see the item at a moment, and by which rule')
    .requiredOption('--database <name-or-id>', 'database of the item')
    .requiredOption('--principal <principal>', "the caller's emails or principals, as a query's acl: repeat the option or separate with commas", (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((x) => x.trim()).filter(Boolean)])
    .option('--at <time>', 'RFC 3339 time (default: now)')
    .option('--collection <name>', 'collection of the item', 'default')
    .option('--org <org>', 'organization (to resolve --database by name)', 'default')
    .action(async (itemId: string, o: { database: string; principal: string[]; at?: string; collection: string; org: string }) => {
      const platform = await cli.platform();
      const databaseId = await databaseIdOf(platform.get(DATA_SOURCE), o);
      const at = o.at ? new Date(o.at) : new Date();
      if (Number.isNaN(at.getTime())) throw new Error(`--at ${o.at} is not a time`);
      const v = await visibleAt(platform.get(EVENT_STORE), databaseId, o.collection, itemId, o.principal, at);
      if (!v) {
        cli.io.err(`no item ${itemId} in collection ${o.collection}`);
        cli.exitCode = 1;
        return;
      }
      cli.io.out(JSON.stringify({ item: itemId, principals: o.principal, at: at.toISOString(), ...v }));
    });
}
