import type { ConnectorState } from './connector.decider';
import { connectorNotFound } from './connector.decider';
import type { ResourceState } from './resource.decider';

/**
 * `status` and `lifecycle` (docs/connectors.md, "Status and lifecycle"), derived from the connector's state and its
 * resources' states; never appended as values of their own.
 */
export type ConnectorStatus = 'healthy' | 'degraded' | 'unauthorized' | 'error';
export type ConnectorLifecycle = 'configuring' | 'initial_sync' | 'active' | 'paused' | 'deleting';

/** Failures in a row (of a kind other than auth and scope) that make a resource `error`. */
export const ERROR_AFTER_CONSECUTIVE_FAILURES = 3;

/**
 * Worst last: the connector shows its worst resource. `unauthorized` ranks above `error` because only new
 * credentials or a new grant clear it, and it is usually what the other failures come from.
 */
export const STATUS_SEVERITY: readonly ConnectorStatus[] = ['healthy', 'degraded', 'error', 'unauthorized'];

export interface StatusVerdict {
  status: ConnectorStatus;
  /** why it is not healthy (or, healthy, what a person should know about its access); null when there is nothing to say */
  reason: string | null;
}

/**
 * One resource's status:
 * - `unauthorized`: a sync failed with kind `auth` or `scope` since the last completed sync;
 * - `error`: three or more failures in a row since the last completed sync (none of them auth or scope), with the
 *   last reason;
 * - `degraded`: one or two failures in a row (retrying); or the last permission capture failed (the last verdict is
 *   kept, never widened); or the last sync was deferred by the provider's rate limit; or the last sync completed with
 *   per-document failures;
 * - `healthy`: otherwise (the last sync completed cleanly, or none has failed yet); the reason then says when the
 *   last capture could not name every member (hidden emails), and which rule governs because of it.
 */
export function resourceStatus(state: ResourceState): StatusVerdict {
  if (state.authFailure) return { status: 'unauthorized', reason: `the provider refused access (${state.authFailure.kind}): ${state.authFailure.message}` };
  const failure = state.lastFailure;
  if (failure && state.consecutiveFailures >= ERROR_AFTER_CONSECUTIVE_FAILURES) {
    return { status: 'error', reason: `${state.consecutiveFailures} syncs in a row failed; the last (${failure.kind}): ${failure.message}` };
  }
  if (failure && state.consecutiveFailures > 0) return { status: 'degraded', reason: `the last sync failed (${failure.kind}): ${failure.message}; it will be retried` };
  if (state.verdict?.status === 'failed') return { status: 'degraded', reason: `permission capture failed: ${state.verdict.message}; the last captured permissions are kept` };
  const outcome = state.lastOutcome;
  if (outcome?.kind === 'deferred' && outcome.reason === 'rate_limited') return { status: 'degraded', reason: `the provider's rate limit deferred the sync until ${outcome.retryAt}` };
  if (outcome?.kind === 'completed' && outcome.counts.failed > 0) return { status: 'degraded', reason: `the last sync completed, but ${outcome.counts.failed} documents could not be synced` };
  const unresolved = state.verdict?.status === 'captured' ? (state.verdict.unresolved ?? 0) : 0;
  if (unresolved > 0) {
    const rule = state.settings?.acl ? "the resource's acl rule governs its documents" : 'no acl rule is set on the resource, so its documents are closed to every caller until one is';
    return { status: 'healthy', reason: `${unresolved} members at the source could not be resolved to an email; ${rule}` };
  }
  return { status: 'healthy', reason: null };
}

/** A resource that counts: configured and not removed. */
export const isLiveResource = (state: ResourceState): boolean => state.phase === 'live';

/** Whether the resource has completed a sync of its current generation (a replace starts it over). */
export const hasCompletedSync = (state: ResourceState): boolean => state.completedGeneration !== null && state.completedGeneration === state.generation;

export interface ConnectorStatusView extends StatusVerdict {
  lifecycle: ConnectorLifecycle;
}

/**
 * The connector's status (its worst live resource; healthy with none) and lifecycle:
 * `deleting` once delete is accepted; else `paused` while paused; else `configuring` with no live resource;
 * `initial_sync` while a live resource has not completed a sync of its current generation; `active` once every one
 * has. Removed resources count for neither. Refuses a connector that was never created (CONNECTOR_NOT_FOUND).
 */
export function connectorStatus(connectorId: string, connector: ConnectorState, resources: readonly ResourceState[]): ConnectorStatusView {
  if (connector.phase === 'absent') throw connectorNotFound(connectorId);
  const live = resources.filter(isLiveResource);
  let worst: StatusVerdict = { status: 'healthy', reason: null };
  for (const resource of live) {
    const verdict = resourceStatus(resource);
    if (STATUS_SEVERITY.indexOf(verdict.status) > STATUS_SEVERITY.indexOf(worst.status)) worst = verdict;
  }
  return { ...worst, lifecycle: lifecycleOf(connector, live) };
}

function lifecycleOf(connector: ConnectorState, live: readonly ResourceState[]): ConnectorLifecycle {
  if (connector.phase === 'deleting' || connector.phase === 'deleted') return 'deleting';
  if (connector.paused) return 'paused';
  if (live.length === 0) return 'configuring';
  return live.every(hasCompletedSync) ? 'active' : 'initial_sync';
}
