import { type EffectiveAccess, effectiveAccess, type PermissionCapture, type StoredAcl } from './access-precedence';
import type { ConnectorState } from './connector.decider';
import { resourcePermission, type ResourceState } from './resource.decider';

/**
 * Who may see a document a connector synced, decided when it is read (access control rules 12-14).
 *
 * A synced item carries no ACL of its own: its access is `effectiveAccess` of the per-document provider permission
 * it was synced with, its resource's provider verdict and the rule set through the API, with the resource and
 * connector as they stand now. So a resource `acl` change (PATCH) or a new verdict applies to every document already
 * synced, on the next read, with no re-sync and no re-index.
 *
 * The rule set through the API is the document's own when it has one (a metadata `acl` edit of that one document),
 * otherwise the resource's. Both are rules set through the API, the document's the narrower scope; the provider's
 * permissions still come first as rule 12 orders them.
 *
 * Served at all: not while its connector is being deleted or is deleted, nor once its resource is removed, unless
 * that deletion or removal keeps the content (`keep`), in which case the rules it was last under (which nothing
 * changes any more) go on deciding. A document whose resource or connector the read model does not know is not
 * served: nothing would decide its access.
 */
export interface SyncedAccessInput {
  /** the per-document provider permission the item was synced with (ItemIngested.connector.permission) */
  document: PermissionCapture | undefined;
  /** a rule set on the document itself through the API (a metadata `acl` edit), stored form */
  documentRule: StoredAcl | undefined;
  /** the item's resource as it stands; null: unknown */
  resource: ResourceState | null;
  /** the item's connector as it stands; null: unknown */
  connector: ConnectorState | null;
}

export type WithdrawnBecause = 'connector-deleted' | 'resource-removed' | 'unknown-source';

export type SyncedAccess = ({ served: true } & EffectiveAccess) | { served: false; because: WithdrawnBecause };

/** Whether a synced document is served, and if so the ACL that decides who sees it (and which rule gave it). */
export function syncedAccess(input: SyncedAccessInput): SyncedAccess {
  const { connector, resource } = input;
  if (!connector || connector.phase === 'absent' || !resource || resource.phase === 'absent') return { served: false, because: 'unknown-source' };
  if ((connector.phase === 'deleting' || connector.phase === 'deleted') && connector.contentPolicy !== 'keep') return { served: false, because: 'connector-deleted' };
  if (resource.phase === 'removed' && resource.contentPolicy !== 'keep') return { served: false, because: 'resource-removed' };
  const apiRule = input.documentRule ?? resource.settings?.acl ?? undefined;
  return { served: true, ...effectiveAccess({ document: input.document ?? { status: 'off' }, resource: resourcePermission(resource), apiRule }) };
}
