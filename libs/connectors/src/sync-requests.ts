import type { Sql } from '@crs/persistence/data-source';

/**
 * "Sync now" requests (POST /connectors/{id}/sync, new credentials, a configure): a row per connector (and resource,
 * or every resource with `resource_id` ''), taken by the scheduler, which then starts the syncs with trigger `manual`
 * (or `initial`). A request is a nudge, not a fact of the log: the syncs it starts are (`SyncStarted`), and a
 * request lost with a crash is made again by the next scheduled sync.
 */
export const SYNC_REQUESTS_DDL = `CREATE TABLE IF NOT EXISTS connector_sync_requests (
  connector_id uuid NOT NULL,
  resource_id text NOT NULL DEFAULT '',
  requested_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (connector_id, resource_id)
)`;

export interface SyncRequest {
  connectorId: string;
  /** null: every live resource of the connector */
  resourceId: string | null;
  requestedAt: Date;
}

export class SyncRequests {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly sql: Sql) {}

  async init(): Promise<void> {
    await this.sql.query(SYNC_REQUESTS_DDL);
  }

  /** Asks for a sync of one resource, or of every resource of the connector; repeating a request keeps one. */
  async request(connectorId: string, resourceId: string | null = null): Promise<void> {
    await this.sql.query(
      `INSERT INTO connector_sync_requests (connector_id, resource_id) VALUES ($1, $2) ON CONFLICT (connector_id, resource_id) DO UPDATE SET requested_at = now()`,
      [connectorId, resourceId ?? ''],
    );
    for (const wake of this.listeners) wake();
  }

  /** Removes and returns up to `limit` requests, oldest first (rows another scheduler holds are skipped). */
  async take(limit: number): Promise<SyncRequest[]> {
    // A CTE so every driver returns plain rows (TypeORM answers DELETE ... RETURNING with [rows, count]).
    const rows = await this.sql.query(
      // As a SELECT over the deleting statement: a data source answers a bare DELETE ... RETURNING as [rows, count].
      `WITH taken AS (
         DELETE FROM connector_sync_requests WHERE (connector_id, resource_id) IN (
           SELECT connector_id, resource_id FROM connector_sync_requests ORDER BY requested_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING connector_id, resource_id, requested_at)
       SELECT * FROM taken ORDER BY requested_at`,
      [limit],
    );
    return rows.map((r: { connector_id: string; resource_id: string; requested_at: Date }) => ({ connectorId: r.connector_id, resourceId: r.resource_id || null, requestedAt: r.requested_at }));
  }

  /** Forgets a connector's requests (it was deleted). */
  async forget(connectorId: string): Promise<void> {
    await this.sql.query('DELETE FROM connector_sync_requests WHERE connector_id = $1', [connectorId]);
  }

  /** Called on every request made in this process (the scheduler wakes instead of waiting for its next poll). */
  onRequest(wake: () => void): () => void {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  }
}
