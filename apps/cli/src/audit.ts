import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { callerPrincipals, explainVisibility, type VisibilityVerdict } from '@crs/domain/acl';
import { itemKey } from '@crs/domain/items/item-input';
import { streams } from '@crs/domain/streams';

/** One ACL fact from the log: the stamping at ingest, or a change. */
export interface AclHistoryEntry {
  at: string;
  position: number;
  event: 'ItemIngested' | 'AclChanged' | 'ItemDeleted';
  store: string;
  acl: string[] | 'unrestricted' | 'deleted';
  actor: string;
  request_id: string | null;
}

async function itemHistory(store: EventStore, databaseId: string, collection: string, itemId: string): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for (const s of ['memory', 'knowledge']) out.push(...(await store.readStream(streams.item(databaseId, itemKey(collection, s, itemId)))));
  return out.sort((a, b) => a.position - b.position);
}

/** Every ACL change of an item, from the log alone (replaying gives the same answer every time). */
export async function aclHistory(store: EventStore, databaseId: string, collection: string, itemId: string): Promise<AclHistoryEntry[]> {
  const history = await itemHistory(store, databaseId, collection, itemId);
  return history
    .filter((e) => e.type === 'ItemIngested' || e.type === 'AclChanged' || e.type === 'ItemDeleted')
    .map((e) => ({
      at: e.metadata.occurredAt,
      position: e.position,
      event: e.type,
      store: e.data.store,
      acl: e.type === 'ItemDeleted' ? 'deleted' : e.data.acl === undefined ? 'unrestricted' : e.data.acl,
      actor: e.metadata.actor,
      request_id: (e.metadata.requestId as string | undefined) ?? null,
    }));
}

/** Could a caller with these principals (a query's `acl`) see the item at `at`, and by which rule: the ACL in force then, replayed from the log. */
export async function visibleAt(store: EventStore, databaseId: string, collection: string, itemId: string, principals: string[], at: Date): Promise<(VisibilityVerdict & { acl: string[] | 'unrestricted' | null; since: string | null }) | null> {
  const history = await aclHistory(store, databaseId, collection, itemId);
  if (!history.length) return null; // no such item in that collection, ever
  const inForce = history.filter((h) => new Date(h.at).getTime() <= at.getTime()).pop();
  if (!inForce || inForce.acl === 'deleted') {
    return { visible: false, rule: inForce ? 'the item was deleted at that time' : 'the item did not exist at that time', acl: null, since: inForce?.at ?? null };
  }
  const verdict = explainVisibility(inForce.acl === 'unrestricted' ? undefined : inForce.acl, callerPrincipals(principals));
  return { ...verdict, acl: inForce.acl, since: inForce.at };
}
