import type { RecordedEvent } from '../../eventstore/src/event-store.port';
import type { Sql } from './data-source';

/**
 * A read-model projection: pure SQL writes derived from events, applied in one transaction with its
 * checkpoint. `apply` must be idempotent (every projection spec delivers each event twice) and must
 * take time only from event metadata, so a rebuild reproduces the read model byte for byte.
 */
export interface ReadModelProjection {
  kind: 'read-model';
  name: string;
  /** Idempotent DDL with unqualified table names (resolved through search_path). */
  ddl: string[];
  /** Tables this projection owns: truncated on rebuild, compared on verify. */
  tables: string[];
  /** Event types this projection reacts to; others only advance its checkpoint. */
  handles: readonly string[];
  apply(event: RecordedEvent, sql: Sql): Promise<void>;
}

/**
 * A processor does work outside the database (index, provision, deliver) and appends what happened
 * as events. It is never rebuilt; its checkpoint only says where to resume after a restart, so
 * `handle` must tolerate seeing an event again.
 */
export interface Processor {
  kind: 'processor';
  name: string;
  handles: readonly string[];
  handle(event: RecordedEvent): Promise<void>;
  /** Optional: the handled events of a batch at once, in log order (for engines where one write beats many). */
  handleBatch?(events: RecordedEvent[]): Promise<void>;
}

export type Subscriber = ReadModelProjection | Processor;
