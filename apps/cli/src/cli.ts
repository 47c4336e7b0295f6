import { Command, CommanderError } from 'commander';
import { CliContext, type CliIo } from './cli-context';
import { auditAcl } from './commands/audit-acl.command';
import { auditVisible } from './commands/audit-visible.command';
import { connectorsList } from './commands/connectors-list.command';
import { connectorsLog } from './commands/connectors-log.command';
import { connectorsStatus } from './commands/connectors-status.command';
import { connectorsSync } from './commands/connectors-sync.command';
import { databasesReembed } from './commands/databases-reembed.command';
import { eventsRead } from './commands/events-read.command';
import { feedbackExport } from './commands/feedback-export.command';
import { feedbackReport } from './commands/feedback-report.command';
import { keysCreate } from './commands/keys-create.command';
import { keysList } from './commands/keys-list.command';
import { keysRevoke } from './commands/keys-revoke.command';
import { projectionsRebuild } from './commands/projections-rebuild.command';
import { projectionsStatus } from './commands/projections-status.command';
import { projectionsVerify } from './commands/projections-verify.command';

/**
 * `crs`: the ops and audit command line, one file per command under commands/. It opens the same platform as the
 * API (cli-context.ts) and never talks HTTP. Returns the exit code.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const cli = new CliContext(io);
  const program = new Command('crs')
    .description('Context Retrieval Service: keys, event log, projections, connectors')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  const keys = program.command('keys').description('API keys (only a hash of each secret is stored)');
  keysCreate(keys, cli);
  keysList(keys, cli);
  keysRevoke(keys, cli);

  const projections = program.command('projections').description('read models built from the event log');
  projectionsStatus(projections, cli);
  projectionsRebuild(projections, cli);
  projectionsVerify(projections, cli);

  const audit = program.command('audit').description('answers from the event log: who could see what, when');
  auditAcl(audit, cli);
  auditVisible(audit, cli);

  databasesReembed(program.command('databases').description('database operations'), cli);

  eventsRead(program.command('events').description('the event log'), cli);

  const connectors = program.command('connectors').description('connectors and their syncs (docs/connectors.md)');
  connectorsList(connectors, cli);
  connectorsStatus(connectors, cli);
  connectorsSync(connectors, cli);
  connectorsLog(connectors, cli);

  const feedback = program.command('feedback').description('feedback submitted through POST /feedback (docs/feedback.md)');
  feedbackExport(feedback, cli);
  feedbackReport(feedback, cli);

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) cli.exitCode = err.exitCode;
    else {
      io.err(`error: ${(err as Error).message}`);
      cli.exitCode = 1;
    }
  } finally {
    await cli.close();
  }
  return cli.exitCode;
}
