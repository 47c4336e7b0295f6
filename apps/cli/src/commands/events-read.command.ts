import type { Command } from 'commander';
import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import { DATA_SOURCE, EVENT_STORE } from '@crs/platform';
import type { CliContext } from '../cli-context';
import { findDatabase } from '../database-argument';
import { wholeNumber } from '../whole-number';

/** `crs events read [--stream s] [--from n] [--database d] [--limit n]`: events as NDJSON, oldest first. */
export function eventsRead(events: Command, cli: CliContext): void {
  events
    .command('read')
    .description('print events as NDJSON')
    .option('--stream <stream>', 'one stream (default: the whole log)')
    .option('--from <position>', 'start after this global position (whole log) or at this revision (stream)', wholeNumber('--from'), '0')
    .option('--database <name-or-id>', 'only events of this database (id, or name of the default organization)')
    .option('--org <org>', 'organization used to resolve --database by name', 'default')
    .option('--limit <n>', 'stop after n events', wholeNumber('--limit'))
    .action(async (o: { stream?: string; from: string; database?: string; org: string; limit?: string }) => {
      const platform = await cli.platform();
      const store = platform.get(EVENT_STORE);
      const limit = o.limit ? Number(o.limit) : Infinity;
      let databaseId: string | undefined;
      if (o.database) databaseId = (await findDatabase(platform.get(DATA_SOURCE), o.org, o.database))?.id;
      if (o.database && !databaseId) {
        throw new Error(`database ${o.database} not found in organization ${o.org} (a deleted database is named by its id: its DatabaseDeleted record is on the stream databases-${o.org})`);
      }
      let printed = 0;
      const emit = (e: RecordedEvent) => {
        const dataDatabaseId = e.data != null && 'databaseId' in e.data ? e.data.databaseId : undefined;
        if (databaseId && e.metadata?.databaseId !== databaseId && dataDatabaseId !== databaseId) return;
        cli.io.out(JSON.stringify({ position: e.position, stream: e.stream, revision: e.revision, type: e.type, data: e.data, metadata: e.metadata }));
        printed++;
      };
      if (o.stream) {
        for (const e of await store.readStream(o.stream, { fromRevision: Number(o.from) })) if (printed < limit) emit(e);
        return;
      }
      let after = Number(o.from);
      while (printed < limit) {
        const page = await store.readAll({ after, maxCount: 1000 });
        if (!page.length) break;
        for (const e of page) if (printed < limit) emit(e);
        after = page[page.length - 1].position;
      }
    });
}
