import type { Pool } from 'pg';
import type { EventStore } from './event-store.port';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { PostgresEventStore } from './postgres/postgres-event-store';

export * from './event-store.port';
export { PostgresEventStore, type PostgresEventStoreOptions, APPEND_LOCK_KEY } from './postgres/postgres-event-store';
export { EVENTS_NOTIFY_CHANNEL } from './postgres/notification-hub';
export { EventStoreDbEventStore, type EventStoreDbEventStoreOptions } from './eventstoredb-event-store';

export interface EventStoreConfig {
  /** EventStoreDB connection string (`EVENTSTORE_URL`); when set, the log lives there. */
  eventstoreUrl?: string;
  /** Postgres pool for the embedded default; stays the caller's (the store never ends it). */
  pool: Pool;
}

/** EventStoreDB when a URL is given, else the Postgres events table (created if missing). */
export async function createEventStore(config: EventStoreConfig): Promise<EventStore> {
  if (config.eventstoreUrl) return new EventStoreDbEventStore(config.eventstoreUrl);
  const store = new PostgresEventStore(config.pool);
  await store.init();
  return store;
}
