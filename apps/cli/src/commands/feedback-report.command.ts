import type { Command } from 'commander';
import { DATA_SOURCE } from '@crs/platform';
import type { CliContext } from '../cli-context';
import { FeedbackRepository } from '../feedback-report';
import { optionalDatabase } from '../database-argument';

/** `crs feedback report [--database d] [--json]`: counts and retrieval quality against the users' ground truth. */
export function feedbackReport(feedback: Command, cli: CliContext): void {
  feedback
    .command('report')
    .description('counts, and retrieval quality (recall@k, MRR) of the recorded results scored against ground_truth.source_ids')
    .option('--database <name-or-id>', 'only feedback about this database')
    .option('--org <org>', 'organization', 'default')
    .option('--json', 'print the report as one JSON object (with per-query scores)')
    .action(async (o: { database?: string; org: string; json?: boolean }) => {
      const platform = await cli.platform();
      const ds = platform.get(DATA_SOURCE);
      const { databaseId, databaseName } = await optionalDatabase(ds, o);
      const r = await new FeedbackRepository(ds).report(o.org, { databaseId, databaseName });
      if (o.json) {
        cli.io.out(JSON.stringify(r));
        return;
      }
      const e = r.evaluation;
      cli.io.out(`feedback ${r.organization}${r.database ? ` / ${r.database}` : ''}: ${r.submissions} submissions (${r.linked} linked to a recorded query, ${r.unlinked} unlinked), ${r.with_ground_truth} with ground truth`);
      cli.io.out(`ratings: positive ${r.ratings.positive}, negative ${r.ratings.negative}, neutral ${r.ratings.neutral}, none ${r.ratings.none}; sources: user ${r.sources.user}, agent ${r.sources.agent}`);
      if (!e.queries) cli.io.out('retrieval quality: no linked query has ground_truth.source_ids yet');
      else cli.io.out(`retrieval quality over ${e.queries} queries with ground_truth.source_ids: ${Object.entries(e.recall_at).map(([k, v]) => `recall@${k} ${v.toFixed(3)}`).join('  ')}  MRR ${e.mrr.toFixed(3)}`);
    });
}
