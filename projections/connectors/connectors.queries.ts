import type { ConnectorState } from '@crs/domain/connectors/connector.decider';
import type { ResourceState } from '@crs/domain/connectors/resource.decider';
import type { Sql } from '@crs/persistence/data-source';

/** A row of rm_connectors: one connector and the state its stream folds to. */
export interface ConnectorRow {
  connector_id: string;
  org_id: string;
  provider: string;
  database_id: string;
  state: ConnectorState;
  created_at: Date;
  updated_at: Date;
}

/** A row of rm_connector_resources: one resource and the state its stream folds to. */
export interface ConnectorResourceRow {
  connector_id: string;
  resource_id: string;
  org_id: string;
  phase: ResourceState['phase'];
  generation: number;
  state: ResourceState;
  running_sync_id: string | null;
  lease_expires_at: Date | null;
  last_ended_at: Date | null;
  retry_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A row of rm_connector_syncs: one sync of a resource. */
export interface ConnectorSyncRow {
  sync_id: string;
  connector_id: string;
  resource_id: string;
  generation: number;
  trigger: string;
  started_at: Date;
  ended_at: Date | null;
  outcome: 'completed' | 'deferred' | 'failed' | 'superseded' | null;
  counts: { upserted: number; unchanged: number; deleted: number; failed: number };
  detail: string | null;
}

/** One connector of an organization (whatever its phase: the caller decides what a deleting one means). */
export async function findConnector(sql: Sql, orgId: string, connectorId: string): Promise<ConnectorRow | null> {
  if (!isUuid(connectorId)) return null;
  const [row] = await sql.query('SELECT * FROM rm_connectors WHERE org_id = $1 AND connector_id = $2', [orgId, connectorId]);
  return row ?? null;
}

/** The organization's connectors, oldest first; `databaseIds` limits them to those databases (a key's reach). */
export function listConnectors(sql: Sql, orgId: string, databaseIds: string[] | null): Promise<ConnectorRow[]> {
  return databaseIds === null
    ? sql.query('SELECT * FROM rm_connectors WHERE org_id = $1 ORDER BY created_at, connector_id', [orgId])
    : sql.query('SELECT * FROM rm_connectors WHERE org_id = $1 AND database_id = ANY($2) ORDER BY created_at, connector_id', [orgId, databaseIds]);
}

/** Every resource of a connector that was ever configured (removed ones included), by resource id. */
export function connectorResources(sql: Sql, connectorId: string): Promise<ConnectorResourceRow[]> {
  return sql.query('SELECT * FROM rm_connector_resources WHERE connector_id = $1 ORDER BY resource_id', [connectorId]);
}

/** The resources of several connectors at once (a list page). */
export function resourcesOfConnectors(sql: Sql, connectorIds: string[]): Promise<ConnectorResourceRow[]> {
  return sql.query('SELECT * FROM rm_connector_resources WHERE connector_id = ANY($1) ORDER BY connector_id, resource_id', [connectorIds]);
}

/** One resource of a connector. */
export async function findConnectorResource(sql: Sql, connectorId: string, resourceId: string): Promise<ConnectorResourceRow | null> {
  const [row] = await sql.query('SELECT * FROM rm_connector_resources WHERE connector_id = $1 AND resource_id = $2', [connectorId, resourceId]);
  return row ?? null;
}

/** The latest syncs of one resource, newest first. */
export function resourceSyncs(sql: Sql, connectorId: string, resourceId: string, limit: number): Promise<ConnectorSyncRow[]> {
  return sql.query('SELECT * FROM rm_connector_syncs WHERE connector_id = $1 AND resource_id = $2 ORDER BY started_at DESC, sync_id LIMIT $3', [connectorId, resourceId, limit]);
}

/** A resource the scheduler may start a sync of, with its connector's row. */
export interface DueResourceRow extends ConnectorResourceRow {
  connector_state: ConnectorState;
  provider: string;
  database_id: string;
}

/**
 * Live resources of live, unpaused connectors whose sync is due at `now`: none running (or its lease expired), and
 * a deferral's `retry_at` has passed; or, after a refusal of the credentials (auth, scope), the connector's interval
 * has passed (new credentials request a sync at once); or, after other failures, a backoff of `backoffBaseSeconds`
 * doubling with each failure in a row, at most the interval; or no sync of this generation has completed; or the
 * interval has passed since the last sync ended. Oldest first, at most `limit`.
 */
export function dueResources(sql: Sql, now: Date, limit: number, backoffBaseSeconds = 30): Promise<DueResourceRow[]> {
  return sql.query(
    `SELECT r.*, c.state AS connector_state, c.provider, c.database_id
     FROM rm_connector_resources r JOIN rm_connectors c USING (connector_id)
     WHERE r.phase = 'live' AND c.state->>'phase' = 'live' AND (c.state->>'paused')::boolean = false
       AND (r.running_sync_id IS NULL OR r.lease_expires_at < $1)
         AND (CASE
              WHEN r.retry_at IS NOT NULL THEN r.retry_at <= $1
              WHEN r.last_ended_at IS NULL THEN true
              WHEN r.state->'authFailure' <> 'null'::jsonb THEN r.last_ended_at + make_interval(secs => (c.state->'settings'->>'syncIntervalSeconds')::int) <= $1
              WHEN (r.state->>'consecutiveFailures')::int > 0 THEN r.last_ended_at + make_interval(secs => LEAST(
                     (c.state->'settings'->>'syncIntervalSeconds')::int, $3::int * power(2, (r.state->>'consecutiveFailures')::int - 1)::int)) <= $1
              WHEN (r.state->>'completedGeneration') IS NULL OR (r.state->>'completedGeneration')::int <> r.generation THEN true
              ELSE r.last_ended_at + make_interval(secs => (c.state->'settings'->>'syncIntervalSeconds')::int) <= $1
            END)
     ORDER BY COALESCE(r.retry_at, r.last_ended_at, r.created_at), r.connector_id, r.resource_id
     LIMIT $2`,
    [now, limit, backoffBaseSeconds],
  );
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
