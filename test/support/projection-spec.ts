import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { DomainEventType } from '@crs/domain/domain-event';
import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import { openDataSource } from '@crs/persistence/data-source';
import type { ReadModelProjection } from '@crs/persistence/projection';

let position = 0;
/** Builds a recorded event for projection specs (time and ids come from the caller, never the clock). */
export function recorded(type: DomainEventType, data: any, meta: Partial<RecordedEvent['metadata']> = {}, stream = 'test-stream'): RecordedEvent {
  position += 1;
  // A spec names the type and writes its data loosely; the union has too many members for the compiler to match a
  // type held in a variable to its member, hence the assertion.
  return {
    type,
    data,
    stream,
    revision: position - 1,
    position,
    metadata: { eventId: `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`, occurredAt: '2026-01-01T00:00:00.000Z', orgId: 'org1', actor: 'test', ...meta },
  } as RecordedEvent;
}

/** Applies events to a projection in a fresh schema; returns every owned table's rows as sorted text. */
export async function project(
  url: string,
  projection: ReadModelProjection,
  events: RecordedEvent[],
  opts: { twice?: boolean; batches?: RecordedEvent[][] } = {},
): Promise<Record<string, string[]>> {
  const schema = `spec_${randomBytes(4).toString('hex')}`;
  const ds: DataSource = await openDataSource(url, { schema, poolSize: 1, name: 'crs-spec' });
  try {
    for (const ddl of projection.ddl) await ds.query(ddl);
    await ds.transaction(async (tx) => {
      if (opts.batches) {
        if (!projection.applyBatch) throw new Error(`${projection.name} has no applyBatch`);
        for (const batch of opts.batches) await projection.applyBatch(batch, tx);
        return;
      }
      for (const e of events) {
        await projection.apply(e, tx);
        if (opts.twice) await projection.apply(e, tx);
      }
    });
    const out: Record<string, string[]> = {};
    for (const t of projection.tables) out[t] = (await ds.query(`SELECT t::text AS r FROM ${t} t ORDER BY 1`)).map((r: any) => r.r);
    return out;
  } finally {
    await ds.query(`DROP SCHEMA ${schema} CASCADE`);
    await ds.destroy();
  }
}

/** The idempotency proof every projection spec runs: each event delivered twice gives the same read model as once. */
export async function expectIdempotent(url: string, projection: ReadModelProjection, events: RecordedEvent[]): Promise<Record<string, string[]>> {
  const once = await project(url, projection, events);
  const twice = await project(url, projection, events, { twice: true });
  expect(twice).toEqual(once);
  return once;
}

/**
 * The batch proof: `applyBatch` over the events cut into pages at random points (and as one page) gives the same
 * read model as `apply` one event at a time. Returns the one-by-one result.
 */
export async function expectBatchEquivalent(url: string, projection: ReadModelProjection, events: RecordedEvent[], random: () => number): Promise<Record<string, string[]>> {
  const one = await project(url, projection, events);
  const pages: RecordedEvent[][] = [];
  for (let i = 0; i < events.length; ) {
    const n = 1 + Math.floor(random() * (random() < 0.3 ? 4 : 60));
    pages.push(events.slice(i, i + n));
    i += n;
  }
  expect(await project(url, projection, events, { batches: pages })).toEqual(one);
  expect(await project(url, projection, events, { batches: [events] })).toEqual(one);
  return one;
}
