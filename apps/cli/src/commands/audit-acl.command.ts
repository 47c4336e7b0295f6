import type { Command } from 'commander';
import { DATA_SOURCE, EVENT_STORE } from '@crs/platform';
import { aclHistory } from '../audit';
import type { CliContext } from '../cli-context';
import { databaseIdOf } from '../database-argument';

/** `crs audit acl <item-id> --database <name-or-id>`: the item's ACL history from the log, one JSON line per change. */
export function auditAcl(audit: Command, cli: CliContext): void {
  audit
    .command('acl <item-id>')
    .description('every ACL change of an item: time, position, actor, request id')
    .requiredOption('--database <name-or-id>', 'database of the item')
    .option('--collection <name>', 'collection of the item', 'default')
    .option('--org <org>', 'organization (to resolve --database by name)', 'default')
    .action(async (itemId: string, o: { database: string; collection: string; org: string }) => {
      const platform = await cli.platform();
      const databaseId = await databaseIdOf(platform.get(DATA_SOURCE), o);
      const history = await aclHistory(platform.get(EVENT_STORE), databaseId, o.collection, itemId);
      if (!history.length) {
        cli.io.err(`no item ${itemId} in collection ${o.collection}`);
        cli.exitCode = 1;
      }
      for (const h of history) cli.io.out(JSON.stringify(h));
    });
}
