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
  counts: { upserted: number; unchanged: number; deleted: number; failed: number; permissions?: number };
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
 * doubling with each failure in a row, at most the interval, times a jitter of 0.8 to 1.2 drawn from the resource and
 * its failure count (resources that failed together, say when their source went down, do not retry together); or no sync of this generation has completed; or the
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
                     (c.state->'settings'->>'syncIntervalSeconds')::int, $3::int * power(2, (r.state->>'consecutiveFailures')::int - 1)::int)
                     * (0.8 + 0.4 * (hashtext(r.connector_id::text || r.resource_id || (r.state->>'consecutiveFailures')) & 65535) / 65535.0)) <= $1
              WHEN (r.state->>'completedGeneration') IS NULL OR (r.state->>'completedGeneration')::int <> r.generation THEN true
              ELSE r.last_ended_at + make_interval(secs => (c.state->'settings'->>'syncIntervalSeconds')::int) <= $1
            END)
     ORDER BY COALESCE(r.retry_at, r.last_ended_at, r.created_at), r.connector_id, r.resource_id
     LIMIT $2`,
    [now, limit, backoffBaseSeconds],
  );
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

// ---- access of synced documents (read with the items they govern, docs/connectors.md) ----

/** The states of these resources (`connectorIds[i]`, `resourceIds[i]`) and of their connectors of a database. */
export function connectorSourceStates(sql: Sql, databaseId: string, connectorIds: string[], resourceIds: string[]): Promise<{ connector_id: string; resource_id: string; resource: ResourceState; connector: ConnectorState | null }[]> {
  return sql.query(
    `SELECT r.connector_id, r.resource_id, r.state AS resource, c.state AS connector
     FROM rm_connector_resources r LEFT JOIN rm_connectors c ON c.connector_id = r.connector_id AND c.database_id = $1
     WHERE (r.connector_id, r.resource_id) IN (SELECT * FROM unnest($2::uuid[], $3::text[]))`,
    [databaseId, connectorIds, resourceIds],
  );
}

/**
 * SQL that decides, when an item is read, whether a synced document is served and which ACL governs it: the same
 * decision as `syncedAccess` (libs/domain/src/connectors/synced-access.ts, over `effectiveAccess`), written over the
 * states this read model folds (`rm_connector_resources.state`, `rm_connectors.state`).
 * `projections/items/synced-access.property.spec.ts` checks on random inputs that the two agree.
 *
 * `i` names an rm_items row. Its resource and connector are read by subqueries that run only for a row with a
 * connector: an item ingested through the API costs a test of `connector_id` and nothing else, so the query path of a
 * database without connector content does the work it did before.
 */
const PRIVATE_ACL = `'["__private__"]'::jsonb`;

/** A JSON ACL in stored form (access-precedence `stored`): a list, `[]` as `__private__`; JSON null or absent: SQL NULL. */
const storedAcl = (acl: string) => `(CASE WHEN jsonb_typeof(${acl}) = 'array' THEN CASE WHEN jsonb_array_length(${acl}) = 0 THEN ${PRIVATE_ACL} ELSE ${acl} END END)`;

/**
 * What a PermissionCapture (JSON) says (access-precedence `resolve`): its ACL, or the last captured one after a
 * failure, or `__private__` after a failure with none before; NULL when it says nothing (off, no permission, absent).
 */
const captured = (p: string) =>
  `(CASE ${p}->>'status' WHEN 'captured' THEN ${storedAcl(`${p}->'acl'`)} WHEN 'failed' THEN CASE WHEN jsonb_typeof(${p}->'last') = 'object' THEN ${storedAcl(`${p}->'last'->'acl'`)} ELSE ${PRIVATE_ACL} END END)`;

/**
 * Whether a PermissionCapture (JSON) is a restriction that could not name every member (access-precedence
 * `rule-or-closed`): captured, or last captured before a failure, with no ACL and `unresolved` > 0.
 */
const unresolved = (p: string) =>
  `(CASE ${p}->>'status' WHEN 'captured' THEN jsonb_typeof(${p}->'acl') IS DISTINCT FROM 'array' AND COALESCE((${p}->>'unresolved')::int, 0) > 0
     WHEN 'failed' THEN jsonb_typeof(${p}->'last') = 'object' AND jsonb_typeof(${p}->'last'->'acl') IS DISTINCT FROM 'array' AND COALESCE((${p}->'last'->>'unresolved')::int, 0) > 0
     ELSE false END)`;

const resourceOf = (i: string, r: string) => `FROM rm_connector_resources ${r} WHERE ${r}.connector_id = ${i}.connector_id AND ${r}.resource_id = ${i}.resource_id`;

/**
 * The ACL (jsonb, stored form; NULL: unrestricted) of rm_items row `i`: its own `acl` when it has no connector,
 * otherwise rule 12 over its per-document permission, its resource's verdict and the rule set through the API (the
 * document's own `acl` when set, else the resource's).
 */
export function syncedAcl(i: string): string {
  const r = `${i}_r`;
  const resource = captured(`${r}.state->'permission'`);
  const api = storedAcl(`COALESCE(${i}.acl, ${r}.state->'settings'->'acl')`);
  // A restriction whose members could not all be named: the API rule, else nobody.
  const ruleOrClosed = `COALESCE(${api}, ${PRIVATE_ACL})`;
  const resourceLevel = `(SELECT CASE WHEN ${unresolved(`${i}.provider_permission`)} THEN ${ruleOrClosed}
      WHEN ${resource} ? '__public__' AND ${api} IS NOT NULL THEN ${api}
      WHEN ${resource} IS NULL AND ${unresolved(`${r}.state->'permission'`)} THEN ${ruleOrClosed}
      ELSE COALESCE(${resource}, ${api}) END ${resourceOf(i, r)})`;
  return `(CASE WHEN ${i}.connector_id IS NULL THEN ${i}.acl ELSE COALESCE(${captured(`${i}.provider_permission`)}, ${resourceLevel}) END)`;
}

/**
 * Whether rm_items row `i` is served as far as connectors go (boolean, never NULL): always without a connector;
 * otherwise its resource and connector (of the item's database) are known, the resource live (or removed keeping its
 * content) and the connector live (or deleting or deleted keeping its content).
 */
export function syncedServed(i: string): string {
  const [r, c] = [`${i}_r`, `${i}_c`];
  return `(${i}.connector_id IS NULL OR COALESCE((SELECT
      (${r}.phase = 'live' OR (${r}.phase = 'removed' AND ${r}.state->>'contentPolicy' = 'keep'))
      AND (${c}.state->>'phase' = 'live' OR (${c}.state->>'phase' IN ('deleting', 'deleted') AND ${c}.state->>'contentPolicy' = 'keep'))
    FROM rm_connector_resources ${r} JOIN rm_connectors ${c} ON ${c}.connector_id = ${r}.connector_id AND ${c}.database_id = ${i}.database_id
    WHERE ${r}.connector_id = ${i}.connector_id AND ${r}.resource_id = ${i}.resource_id), false))`;
}
