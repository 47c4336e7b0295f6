import { connectorStatus, hasCompletedSync, resourceStatus, type ConnectorLifecycle, type ConnectorStatus } from '@crs/domain/connectors/connector-status';
import type { ConnectorState } from '@crs/domain/connectors/connector.decider';
import type { ResourceState } from '@crs/domain/connectors/resource.decider';
import { effectiveInstructions } from '@crs/domain/connectors/effective-instructions';
import type { ConnectorResourceRow } from '@crs/projections/connectors/connectors.queries';
import type { VisibleConnector } from './connector-directory';

/** The value every credential field shows: credentials are never returned, only which fields are set. */
export const MASKED = '***';

export interface ConnectorView {
  connector_id: string;
  provider: string;
  database: string;
  collection: string;
  custom_instructions: string | null;
  sync_interval_seconds: number;
  provider_account_scope: string;
  capture_permissions: boolean;
  credentials: Record<string, string>;
  status: ConnectorStatus;
  status_reason: string | null;
  lifecycle: ConnectorLifecycle;
  paused: boolean;
  resource_count: number;
  last_sync_ended_at: string | null;
  created_at: string;
  updated_at: string;
}

export type ResourceLifecycle = 'initial_sync' | 'active' | 'paused';

export interface LastSyncView {
  sync_id: string;
  outcome: 'completed' | 'deferred' | 'failed';
  ended_at: string | null;
  counts?: { upserted: number; unchanged: number; deleted: number; failed: number; permissions: number };
  retry_at?: string;
  reason?: string;
  failure?: string;
  message?: string;
}

export interface ResourceView {
  resource_id: string;
  resource_type: string;
  name: string;
  database: string;
  collection: string;
  metadata: Record<string, unknown> | null;
  additional_metadata: Record<string, unknown> | null;
  options: Record<string, unknown> | null;
  acl: string[] | null;
  /** absent when the resource inherits the connector's */
  custom_instructions?: string;
  effective_custom_instructions: string | null;
  generation: number;
  status: ConnectorStatus;
  status_reason: string | null;
  lifecycle: ResourceLifecycle;
  syncing: boolean;
  last_sync: LastSyncView | null;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The connector's settings (never its credentials' values), status and lifecycle. */
export function connectorView(c: VisibleConnector, resources: readonly ConnectorResourceRow[], credentialFields: readonly string[], state: ConnectorState = c.row.state): ConnectorView {
  const settings = state.settings ?? c.settings;
  const live = resources.filter((r) => r.phase === 'live');
  const verdict = connectorStatus(c.row.connector_id, state, live.map((r) => r.state));
  const ended = live.map((r) => r.last_ended_at).filter((d): d is Date => d !== null).map((d) => new Date(d).getTime());
  return {
    connector_id: c.row.connector_id,
    provider: settings.provider,
    database: c.database.name,
    collection: settings.collection,
    custom_instructions: settings.customInstructions,
    sync_interval_seconds: settings.syncIntervalSeconds,
    provider_account_scope: settings.providerAccountScope,
    capture_permissions: settings.captureEnabled,
    credentials: Object.fromEntries(credentialFields.map((f) => [f, MASKED])),
    status: verdict.status,
    status_reason: verdict.reason,
    lifecycle: verdict.lifecycle,
    paused: state.paused,
    resource_count: live.length,
    last_sync_ended_at: ended.length ? new Date(Math.max(...ended)).toISOString() : null,
    created_at: iso(c.row.created_at)!,
    updated_at: iso(c.row.updated_at)!,
  };
}

export function lastSyncOf(state: ResourceState, endedAt: Date | null): LastSyncView | null {
  const o = state.lastOutcome;
  if (!o) return null;
  const ended_at = iso(endedAt);
  switch (o.kind) {
    case 'completed':
      return { sync_id: o.syncId, outcome: 'completed', ended_at, counts: { ...o.counts, permissions: o.counts.permissions ?? 0 } };
    case 'deferred':
      return { sync_id: o.syncId, outcome: 'deferred', ended_at, retry_at: o.retryAt, reason: o.reason };
    case 'failed':
      return { sync_id: o.syncId, outcome: 'failed', ended_at, failure: o.failure, message: o.message };
  }
}

/** One resource's settings (`custom_instructions` absent when inherited), status and lifecycle. */
export function resourceView(c: VisibleConnector, resourceId: string, state: ResourceState, endedAt: Date | null, connectorPaused = c.row.state.paused): ResourceView {
  const s = state.settings!;
  const verdict = resourceStatus(state);
  const view: ResourceView = {
    resource_id: resourceId,
    resource_type: s.resourceType,
    name: s.name,
    database: c.database.name,
    collection: s.collection ?? c.settings.collection,
    metadata: s.metadata,
    additional_metadata: s.additionalMetadata,
    options: s.options,
    acl: s.acl,
    effective_custom_instructions: effectiveInstructions(s.customInstructions, c.settings.customInstructions),
    generation: state.generation,
    status: verdict.status,
    status_reason: verdict.reason,
    lifecycle: connectorPaused ? 'paused' : hasCompletedSync(state) ? 'active' : 'initial_sync',
    syncing: state.running !== null,
    last_sync: lastSyncOf(state, endedAt),
  };
  if (s.customInstructions !== null) view.custom_instructions = s.customInstructions;
  return view;
}
