import type { Sql } from '@crs/persistence/data-source';

/**
 * Pruning held back by the mass-deletion guard (docs/connectors.md, "Pruning and the mass-deletion guard"): a row per
 * resource whose last listing would have deleted more than the threshold of its synced documents (or all of them).
 * The next sync of the same generation that lists a mass deletion again applies it and clears the row; a listing
 * that does not clears it too. Not a fact of the log: the row only says "the previous listing looked like this", and a
 * lost row costs one more sync before the deletion applies.
 */
export const PRUNE_HOLDS_DDL = `CREATE TABLE IF NOT EXISTS connector_prune_holds (
  connector_id uuid NOT NULL,
  resource_id text NOT NULL,
  generation int NOT NULL,
  known int NOT NULL,
  listed int NOT NULL,
  gone int NOT NULL,
  held_at timestamptz NOT NULL,
  PRIMARY KEY (connector_id, resource_id)
)`;

export interface PruneHold {
  generation: number;
  known: number;
  listed: number;
  gone: number;
  heldAt: Date;
}

export class PruneHolds {
  constructor(private readonly sql: Sql) {}

  async init(): Promise<void> {
    await this.sql.query(PRUNE_HOLDS_DDL);
  }

  async get(connectorId: string, resourceId: string): Promise<PruneHold | null> {
    const [row] = await this.sql.query('SELECT generation, known, listed, gone, held_at FROM connector_prune_holds WHERE connector_id = $1 AND resource_id = $2', [connectorId, resourceId]);
    return row ? { generation: row.generation, known: row.known, listed: row.listed, gone: row.gone, heldAt: row.held_at } : null;
  }

  async hold(connectorId: string, resourceId: string, hold: PruneHold): Promise<void> {
    await this.sql.query(
      `INSERT INTO connector_prune_holds (connector_id, resource_id, generation, known, listed, gone, held_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (connector_id, resource_id) DO UPDATE SET generation = EXCLUDED.generation, known = EXCLUDED.known, listed = EXCLUDED.listed, gone = EXCLUDED.gone, held_at = EXCLUDED.held_at`,
      [connectorId, resourceId, hold.generation, hold.known, hold.listed, hold.gone, hold.heldAt],
    );
  }

  async clear(connectorId: string, resourceId?: string): Promise<void> {
    if (resourceId === undefined) await this.sql.query('DELETE FROM connector_prune_holds WHERE connector_id = $1', [connectorId]);
    else await this.sql.query('DELETE FROM connector_prune_holds WHERE connector_id = $1 AND resource_id = $2', [connectorId, resourceId]);
  }
}
