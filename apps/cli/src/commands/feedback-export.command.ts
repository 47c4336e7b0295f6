import type { Command } from 'commander';
import { DATA_SOURCE } from '@crs/platform';
import type { CliContext } from '../cli-context';
import { FeedbackRepository } from '../feedback-report';
import { optionalDatabase } from '../database-argument';

/** `crs feedback export [--database d] [--since t]`: every submission as NDJSON. */
export function feedbackExport(feedback: Command, cli: CliContext): void {
  feedback
    .command('export')
    .description('every submission as NDJSON, oldest first, with the linked query and its recorded results')
    .option('--database <name-or-id>', 'only feedback about this database')
    .option('--since <time>', 'only feedback recorded at or after this RFC 3339 time')
    .option('--org <org>', 'organization', 'default')
    .action(async (o: { database?: string; since?: string; org: string }) => {
      const since = o.since ? new Date(o.since) : undefined;
      if (since && Number.isNaN(since.getTime())) throw new Error(`--since ${o.since} is not a time`);
      const platform = await cli.platform();
      const ds = platform.get(DATA_SOURCE);
      const { databaseId } = await optionalDatabase(ds, o);
      for (const line of await new FeedbackRepository(ds).export(o.org, { databaseId, since })) cli.io.out(JSON.stringify(line));
    });
}
