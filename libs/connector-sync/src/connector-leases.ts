import type { Sql } from '@crs/persistence/data-source';

/**
 * One sync per connector, across every worker process (docs/connectors.md, "Leases"): before a sync starts on one of
 * a connector's resources it takes the connector's lease, renews it with its resource lease, and gives it back when it
 * ends; a process that died loses it when it expires. The resource lease in the log says who syncs a resource; this
 * row only says that some sync of the connector is running, so a source is never read by two syncs at once (its rate
 * limits are per account). Not a fact of the log: a lost row costs at most one sync running beside another.
 */
export const CONNECTOR_LEASES_DDL = `CREATE TABLE IF NOT EXISTS connector_leases (
  connector_id uuid PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
)`;

export class ConnectorLeases {
  constructor(private readonly sql: Sql) {}

  async init(): Promise<void> {
    await this.sql.query(CONNECTOR_LEASES_DDL);
  }

  /** Takes the connector's lease for `holder` until `until`, when it is free, expired at `now`, or already the holder's. */
  async acquire(connectorId: string, holder: string, until: Date, now: Date): Promise<boolean> {
    const rows = await this.sql.query(
      `WITH taken AS (
         INSERT INTO connector_leases (connector_id, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (connector_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE connector_leases.expires_at <= $4 OR connector_leases.holder = EXCLUDED.holder
         RETURNING 1)
       SELECT count(*)::int AS n FROM taken`,
      [connectorId, holder, until, now],
    );
    return rows[0].n === 1;
  }

  /** Moves the holder's lease to `until`; false when the holder no longer has it. */
  async renew(connectorId: string, holder: string, until: Date): Promise<boolean> {
    const rows = await this.sql.query(`WITH renewed AS (UPDATE connector_leases SET expires_at = $3 WHERE connector_id = $1 AND holder = $2 RETURNING 1) SELECT count(*)::int AS n FROM renewed`, [connectorId, holder, until]);
    return rows[0].n === 1;
  }

  async release(connectorId: string, holder: string): Promise<void> {
    await this.sql.query(`WITH released AS (DELETE FROM connector_leases WHERE connector_id = $1 AND holder = $2 RETURNING 1) SELECT count(*) FROM released`, [connectorId, holder]);
  }

  /** When the connector's lease runs out, or null when none is held. */
  async heldUntil(connectorId: string): Promise<Date | null> {
    const [row] = await this.sql.query(`SELECT expires_at FROM connector_leases WHERE connector_id = $1`, [connectorId]);
    return row ? new Date(row.expires_at) : null;
  }
}
