import { evolveConnector, initialConnector, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_STREAM_EVENT_TYPES, RESOURCE_EVENT_TYPES, type ConnectorStreamEvent, type ResourceEvent } from '@crs/domain/connectors/connector.events';
import { evolveResource, initialResource } from '@crs/domain/connectors/resource.decider';
import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import type { ReadModelProjection } from '@crs/persistence/projection';

/**
 * Connectors and their resources as the API and the sync scheduler read them. Each row holds the state the stream's
 * decider folds (`evolveConnector`, `evolveResource`), so the read model and the decisions agree by construction, plus
 * the columns queries select on: the organization and database, a resource's phase, its running sync's lease, when
 * its last sync ended and when a deferred one may resume. `rm_connector_syncs` keeps one row per sync (the log of a
 * resource's syncs). Status and lifecycle are derived from these states when read (connector-status.ts), never stored.
 * A deleted database takes its connectors with it.
 */
export const connectorsProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'connectors',
  tables: ['rm_connectors', 'rm_connector_resources', 'rm_connector_syncs'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_connectors (
      connector_id uuid PRIMARY KEY,
      org_id text NOT NULL,
      provider text NOT NULL,
      database_id uuid NOT NULL,
      state jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      position bigint NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS rm_connectors_org ON rm_connectors (org_id, created_at, connector_id)`,
    `CREATE TABLE IF NOT EXISTS rm_connector_resources (
      connector_id uuid NOT NULL,
      resource_id text NOT NULL,
      org_id text NOT NULL,
      phase text NOT NULL,
      generation int NOT NULL,
      state jsonb NOT NULL,
      running_sync_id text,
      lease_expires_at timestamptz,
      last_ended_at timestamptz,
      retry_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      position bigint NOT NULL,
      PRIMARY KEY (connector_id, resource_id)
    )`,
    `CREATE TABLE IF NOT EXISTS rm_connector_syncs (
      sync_id text PRIMARY KEY,
      connector_id uuid NOT NULL,
      resource_id text NOT NULL,
      generation int NOT NULL,
      trigger text NOT NULL,
      started_at timestamptz NOT NULL,
      ended_at timestamptz,
      outcome text,
      counts jsonb NOT NULL,
      detail text,
      position bigint NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS rm_connector_syncs_resource ON rm_connector_syncs (connector_id, resource_id, started_at DESC)`,
  ],
  handles: [...CONNECTOR_STREAM_EVENT_TYPES, ...RESOURCE_EVENT_TYPES, 'DatabaseDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    switch (event.type) {
      case 'DatabaseDeleted': {
        const ids = `SELECT connector_id FROM rm_connectors WHERE database_id = $1`;
        await sql.query(`DELETE FROM rm_connector_syncs WHERE connector_id IN (${ids})`, [event.data.databaseId]);
        await sql.query(`DELETE FROM rm_connector_resources WHERE connector_id IN (${ids})`, [event.data.databaseId]);
        await sql.query('DELETE FROM rm_connectors WHERE database_id = $1', [event.data.databaseId]);
        return;
      }
      case 'ConnectorCreated':
      case 'ConnectorSettingsChanged':
      case 'ConnectorCredentialsRotated':
      case 'ConnectorPaused':
      case 'ConnectorResumed':
      case 'ConnectorDeletionRequested':
      case 'ConnectorDeleted':
        return applyConnector(event, sql);
      case 'ResourceConfigured':
      case 'ResourceReplaced':
      case 'ResourceSettingsChanged':
      case 'ResourceRemoved':
      case 'SyncStarted':
      case 'SyncCheckpointRecorded':
      case 'SyncLeaseRenewed':
      case 'PermissionsCaptured':
      case 'SyncCompleted':
      case 'SyncDeferred':
      case 'SyncFailed':
        return applyResource(event, sql);
      default:
        return;
    }
  },
};

async function applyConnector(event: RecordedEvent<ConnectorStreamEvent>, sql: Sql): Promise<void> {
  const id = event.data.connectorId;
  const [row] = await sql.query('SELECT state FROM rm_connectors WHERE connector_id = $1', [id]);
  // A connector of a deleted database has no row: its later events change nothing.
  if (!row && event.type !== 'ConnectorCreated') return;
  const before: ConnectorState = row ? row.state : initialConnector();
  const state = evolveConnector(before, event);
  if (event.type === 'ConnectorCreated') {
    await sql.query(
      `INSERT INTO rm_connectors (connector_id, org_id, provider, database_id, state, created_at, updated_at, position)
       VALUES ($1, $2, $3, $4, $5, $6, $6, $7) ON CONFLICT (connector_id) DO NOTHING`,
      [id, event.metadata.orgId, event.data.provider, event.data.databaseId, JSON.stringify(state), event.metadata.occurredAt, event.position],
    );
    return;
  }
  await sql.query('UPDATE rm_connectors SET state = $2, updated_at = $3, position = $4 WHERE connector_id = $1', [id, JSON.stringify(state), event.metadata.occurredAt, event.position]);
}

async function applyResource(event: RecordedEvent<ResourceEvent>, sql: Sql): Promise<void> {
  const { connectorId, resourceId } = event.data;
  const [connector] = await sql.query('SELECT 1 FROM rm_connectors WHERE connector_id = $1', [connectorId]);
  if (!connector) return;
  const [row] = await sql.query('SELECT state FROM rm_connector_resources WHERE connector_id = $1 AND resource_id = $2', [connectorId, resourceId]);
  const state = evolveResource(row ? row.state : initialResource(), event);
  const at = event.metadata.occurredAt;
  const ended = event.type === 'SyncCompleted' || event.type === 'SyncFailed' || event.type === 'SyncDeferred';
  await sql.query(
    `INSERT INTO rm_connector_resources (connector_id, resource_id, org_id, phase, generation, state, running_sync_id, lease_expires_at, last_ended_at, retry_at, created_at, updated_at, position)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)
     ON CONFLICT (connector_id, resource_id) DO UPDATE SET phase = EXCLUDED.phase, generation = EXCLUDED.generation, state = EXCLUDED.state,
       running_sync_id = EXCLUDED.running_sync_id, lease_expires_at = EXCLUDED.lease_expires_at,
       last_ended_at = COALESCE(EXCLUDED.last_ended_at, rm_connector_resources.last_ended_at),
       retry_at = EXCLUDED.retry_at, updated_at = EXCLUDED.updated_at, position = EXCLUDED.position`,
    [
      connectorId, resourceId, event.metadata.orgId, state.phase, state.generation, JSON.stringify(state),
      state.running?.syncId ?? null, state.running?.leaseExpiresAt ?? null, ended ? at : null,
      state.lastOutcome?.kind === 'deferred' && !state.running ? state.lastOutcome.retryAt : null, at, event.position,
    ],
  );
  await recordSync(event, sql);
}

/** The log of syncs: a row per sync, its outcome once it ends. */
async function recordSync(event: RecordedEvent<ResourceEvent>, sql: Sql): Promise<void> {
  const at = event.metadata.occurredAt;
  switch (event.type) {
    case 'SyncStarted': {
      const d = event.data;
      if (d.supersedes) await sql.query(`UPDATE rm_connector_syncs SET ended_at = $2, outcome = 'superseded' WHERE sync_id = $1 AND ended_at IS NULL`, [d.supersedes, at]);
      await sql.query(
        `INSERT INTO rm_connector_syncs (sync_id, connector_id, resource_id, generation, trigger, started_at, counts, position)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (sync_id) DO NOTHING`,
        [d.syncId, d.connectorId, d.resourceId, d.generation, d.trigger, d.startedAt, JSON.stringify({ upserted: 0, unchanged: 0, deleted: 0, failed: 0, permissions: 0 }), event.position],
      );
      return;
    }
    case 'SyncCheckpointRecorded': {
      const c = event.data.counts;
      await sql.query(
        `UPDATE rm_connector_syncs SET counts = jsonb_build_object('upserted', (counts->>'upserted')::int + $2, 'unchanged', (counts->>'unchanged')::int + $3,
           'deleted', (counts->>'deleted')::int + $4, 'failed', (counts->>'failed')::int + $5,
           'permissions', COALESCE((counts->>'permissions')::int, 0) + $6) WHERE sync_id = $1`,
        [event.data.syncId, c.upserted, c.unchanged, c.deleted, c.failed, c.permissions ?? 0],
      );
      return;
    }
    case 'SyncCompleted':
      await sql.query(`UPDATE rm_connector_syncs SET ended_at = $2, outcome = 'completed', counts = $3 WHERE sync_id = $1`, [
        event.data.syncId,
        at,
        JSON.stringify({ ...event.data.counts, permissions: event.data.counts.permissions ?? 0 }),
      ]);
      return;
    case 'SyncDeferred':
      await sql.query(`UPDATE rm_connector_syncs SET ended_at = $2, outcome = 'deferred', detail = $3 WHERE sync_id = $1`, [event.data.syncId, at, `${event.data.reason} until ${event.data.retryAt}`]);
      return;
    case 'SyncFailed':
      await sql.query(`UPDATE rm_connector_syncs SET ended_at = $2, outcome = 'failed', detail = $3 WHERE sync_id = $1`, [event.data.syncId, at, `${event.data.kind}: ${event.data.message}`]);
      return;
    case 'ResourceRemoved':
    case 'ResourceReplaced':
      // A running sync of the old generation ends with its resource.
      await sql.query(`UPDATE rm_connector_syncs SET ended_at = $3, outcome = 'superseded' WHERE connector_id = $1 AND resource_id = $2 AND ended_at IS NULL`, [event.data.connectorId, event.data.resourceId, at]);
      return;
    default:
      return;
  }
}
