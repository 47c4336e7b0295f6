import type { ConnectorEvent } from './connectors/connector.events';
import type { DatabaseEvent } from './events';
import type { FeedbackEvent } from './feedback/feedback.events';
import type { ItemEvent } from './items/item.events';
import type { QueryRecorded } from './query.events';
import type { DeliveryEvent, WebhookEvent } from './webhooks/webhook.events';

/**
 * Every event the service appends to its log, as one union discriminated by `type`. The event store's port is typed
 * by it, so a consumer narrows an event with `switch (event.type)` (or `event.type === '...'`) and reads its data
 * with its own type, without a cast.
 *
 * A new event type: declare it beside its family (`items/item.events.ts`, `webhooks/webhook.events.ts`, ...), add it
 * to that family's union, and (for a new family) add the family here.
 */
export type DomainEvent = DatabaseEvent | ItemEvent | FeedbackEvent | QueryRecorded | WebhookEvent | DeliveryEvent | ConnectorEvent;

export type DomainEventType = DomainEvent['type'];

/** The event (or events) of the given type(s): `EventOfType<'ItemChunked'>`, `EventOfType<'ItemIngested' | 'ItemDeleted'>`. */
export type EventOfType<K extends DomainEventType> = Extract<DomainEvent, { type: K }>;

/** Whether an event is of one of `types`, narrowing it to those types' members (`types` as listed, e.g. a `handles`). */
export function isEventOf<K extends DomainEventType, E extends { type: string }>(event: E, types: readonly K[]): event is Extract<E, { type: K }> {
  const names: readonly string[] = types;
  return names.includes(event.type);
}
