import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { callerPrincipals, explainVisibility, type VisibilityVerdict } from '@crs/domain/acl';
import { itemKey } from '@crs/domain/items/item-input';
import type { SyncedItemSource } from '@crs/domain/items/item.events';
import { streams } from '@crs/domain/streams';
import { evolveConnector, initialConnector } from '@crs/domain/connectors/connector.decider';
import { evolveResource, initialResource } from '@crs/domain/connectors/resource.decider';
import { CONNECTOR_STREAM_EVENT_TYPES, RESOURCE_EVENT_TYPES } from '@crs/domain/connectors/connector.events';
import { isEventOf } from '@crs/domain/domain-event';
import type { AccessDecidedBy } from '@crs/domain/connectors/access-precedence';
import { syncedAccess, type WithdrawnBecause } from '@crs/domain/connectors/synced-access';

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

/** For a synced document: where it comes from and which rule gave the ACL in force (rule 12), or why it was not served. */
export interface SyncedVerdict {
  connector_id: string;
  resource_id: string;
  /** the source of the ACL: the per-document provider permission, the resource's provider verdict, the rule set through the API, or none (unrestricted) */
  decided_by: AccessDecidedBy | null;
  /** the API rule was the document's own (a metadata acl edit) rather than the resource's */
  api_rule_of: 'document' | 'resource' | null;
  /** the deciding provider verdict is the last capture kept after a failed one */
  from_last_capture: boolean;
  /** set when the document was not served at all then */
  withdrawn?: WithdrawnBecause;
}

export type VisibleAtVerdict = VisibilityVerdict & { acl: string[] | 'unrestricted' | null; since: string | null; synced?: SyncedVerdict };

/**
 * Could a caller with these principals (a query's `acl`) see the item at `at`, and by which rule: the ACL in force
 * then, replayed from the log. A synced document's ACL is decided as a query decides it (`syncedAccess`), from the
 * item's per-document permission and its resource and connector streams replayed up to `at`.
 */
export async function visibleAt(store: EventStore, databaseId: string, collection: string, itemId: string, principals: string[], at: Date): Promise<VisibleAtVerdict | null> {
  const history = await itemHistory(store, databaseId, collection, itemId);
  const acls = await aclHistory(store, databaseId, collection, itemId);
  if (!acls.length) return null; // no such item in that collection, ever
  const until = (e: RecordedEvent) => new Date(e.metadata.occurredAt).getTime() <= at.getTime();
  const inForce = acls.filter((h) => new Date(h.at).getTime() <= at.getTime()).pop();
  if (!inForce || inForce.acl === 'deleted') {
    return { visible: false, rule: inForce ? 'the item was deleted at that time' : 'the item did not exist at that time', acl: null, since: inForce?.at ?? null };
  }
  const caller = callerPrincipals(principals);
  // The version in force is the last ingest (of the store the in-force entry belongs to) before `at`.
  const past = history.filter((e) => until(e) && (e.type === 'ItemIngested' || e.type === 'AclChanged' || e.type === 'ProviderPermissionChanged') && e.data.store === inForce.store);
  const ingested = past.filter((e) => e.type === 'ItemIngested').pop();
  const synced: SyncedItemSource | undefined = ingested?.type === 'ItemIngested' ? ingested.data.connector : undefined;
  // The per-document permission in force: the version's, replaced by each permission-only change since.
  const source = synced && ingested ? past.filter((e) => e.position > ingested.position).reduce((src, e) => (e.type === 'ProviderPermissionChanged' ? { ...src, permission: e.data.permission ?? undefined } : src), synced) : undefined;
  if (!source) {
    const verdict = explainVisibility(inForce.acl === 'unrestricted' ? undefined : inForce.acl, caller);
    return { ...verdict, acl: inForce.acl, since: inForce.at };
  }
  const documentRule = inForce.acl === 'unrestricted' ? undefined : inForce.acl;
  const connectorEvents = (await store.readStream(streams.connector(source.connectorId))).filter((e) => until(e) && isEventOf(e, CONNECTOR_STREAM_EVENT_TYPES));
  const resourceEvents = (await store.readStream(streams.connectorResource(source.connectorId, source.resourceId))).filter((e) => until(e) && isEventOf(e, RESOURCE_EVENT_TYPES));
  const connector = connectorEvents.length ? connectorEvents.reduce((st, e) => (isEventOf(e, CONNECTOR_STREAM_EVENT_TYPES) ? evolveConnector(st, e) : st), initialConnector()) : null;
  const resource = resourceEvents.length ? resourceEvents.reduce((st, e) => (isEventOf(e, RESOURCE_EVENT_TYPES) ? evolveResource(st, e) : st), initialResource()) : null;
  const access = syncedAccess({ document: source.permission, documentRule, resource, connector });
  const ids = { connector_id: source.connectorId, resource_id: source.resourceId };
  const since = [...past, ...connectorEvents, ...resourceEvents].map((e) => e.metadata.occurredAt).sort().pop() ?? inForce.at;
  if (!access.served) {
    const why = { 'connector-deleted': 'its connector was being deleted or was deleted', 'resource-removed': 'its resource was removed', 'unknown-source': 'its connector or resource did not exist' }[access.because];
    return { visible: false, rule: `rule 14: a synced document is not served once ${why} (content policy delete)`, acl: null, since, synced: { ...ids, decided_by: null, api_rule_of: null, from_last_capture: false, withdrawn: access.because } };
  }
  const verdict = explainVisibility(access.acl, caller);
  const apiRuleOf = access.decidedBy === 'api-rule' || access.decidedBy === 'api-rule-over-public-provider-verdict' ? (documentRule ? 'document' : 'resource') : null;
  const by: Record<AccessDecidedBy, string> = {
    'document-permission': 'the per-document provider permission',
    'resource-permission': "the resource's provider verdict",
    'api-rule': `the ${apiRuleOf} rule set through the API`,
    'api-rule-over-public-provider-verdict': `the ${apiRuleOf} rule set through the API (a public provider verdict does not override it)`,
    'failed-capture-closed': 'a failed permission capture with no earlier verdict (closed)',
    'unresolved-members-closed': 'a provider restriction whose members could not all be named, with no rule set through the API (closed)',
    unrestricted: 'no rule from the provider or the API (unrestricted)',
  };
  return {
    ...verdict,
    rule: `rule 12: ${by[access.decidedBy]}${access.fromLastCapture ? ' (the last capture, kept after a failed one)' : ''} gives the ACL; ${verdict.rule}`,
    acl: access.acl ?? 'unrestricted',
    since,
    synced: { ...ids, decided_by: access.decidedBy, api_rule_of: apiRuleOf, from_last_capture: access.fromLastCapture },
  };
}
