import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import { connectorNotFound, type ConnectorSettings } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_CREDENTIALS, DATA_SOURCE } from '@crs/platform/tokens';
import { connectorResources, findConnector, listConnectors, resourcesOfConnectors, type ConnectorResourceRow, type ConnectorRow } from '@crs/projections/connectors/connectors.queries';
import type { Caller } from '../use-case/caller';
import { connectorView, type ConnectorView } from './connector-view';
import { DatabaseDirectory, keyReaches, type DatabaseRecord } from '../databases/database-directory';

/** A connector the caller may see, with its settings and its database. */
export interface VisibleConnector {
  row: ConnectorRow;
  settings: ConnectorSettings;
  database: DatabaseRecord;
}

/**
 * Finds connectors for a caller in the `connectors` read model. A connector is visible to a key of its organization
 * that reaches its database (a key limited to listed databases sees only the connectors of those), while the
 * connector is live and its database is not being deleted; anything else (another organization's connector, one out
 * of the key's reach, one whose deletion was accepted, an id that is not a UUID) is 404 CONNECTOR_NOT_FOUND, the same
 * answer in every case.
 */
@Injectable()
export class ConnectorDirectory {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly databases: DatabaseDirectory,
    @Inject(CONNECTOR_CREDENTIALS) private readonly vault: ConnectorCredentialVault,
  ) {}

  /** The live connector, or 404. `deleting`: a connector whose deletion is under way is found too (DELETE repeats). */
  async find(caller: Caller, connectorId: string, opts: { deleting?: boolean } = {}): Promise<VisibleConnector> {
    const row = await findConnector(this.ds, caller.key.orgId, connectorId);
    const phaseOk = row && (row.state.phase === 'live' || (opts.deleting === true && row.state.phase === 'deleting'));
    if (!row || !phaseOk || !row.state.settings) throw connectorNotFound(connectorId);
    const database = await this.databases.findById(caller.key.orgId, row.database_id);
    if (!database || database.status === 'deleting' || !keyReaches(caller.key, database.name)) throw connectorNotFound(connectorId);
    return { row, settings: row.state.settings, database };
  }

  /** The live connectors the caller may see, oldest first; `database` narrows them to one database (404 if out of reach). */
  async list(caller: Caller, database?: string): Promise<{ connectors: VisibleConnector[]; resources: Map<string, ConnectorResourceRow[]> }> {
    const reachable = database ? [await this.databases.resolve(caller.key, database)] : await this.databases.list(caller.key);
    const byId = new Map(reachable.map((d) => [d.id, d]));
    const rows = (await listConnectors(this.ds, caller.key.orgId, [...byId.keys()])).filter((r) => r.state.phase === 'live' && r.state.settings);
    const connectors = rows.map((row) => ({ row, settings: row.state.settings!, database: byId.get(row.database_id)! }));
    const resources = new Map<string, ConnectorResourceRow[]>();
    if (rows.length) for (const r of await resourcesOfConnectors(this.ds, rows.map((c) => c.connector_id))) resources.set(r.connector_id, [...(resources.get(r.connector_id) ?? []), r]);
    return { connectors, resources };
  }

  /** The connector's resources that are configured and not removed, by resource id. */
  async liveResources(connectorId: string): Promise<ConnectorResourceRow[]> {
    return (await connectorResources(this.ds, connectorId)).filter((r) => r.phase === 'live');
  }

  /** The connector as GET shows it: settings, masked credentials, status and lifecycle from its resources. */
  async view(c: VisibleConnector): Promise<ConnectorView> {
    const [resources, fields] = await Promise.all([connectorResources(this.ds, c.row.connector_id), this.credentialFieldNames(c.row.org_id, c.settings.credentialsId)]);
    return connectorView(c, resources, fields);
  }

  /**
   * The names of the credential fields the connector holds, never their values: `GET` shows each as "***" so a
   * person sees which fields are set.
   */
  async credentialFieldNames(orgId: string, credentialsId: string): Promise<string[]> {
    const credentials = await this.vault.get(orgId, credentialsId).catch(() => null);
    return credentials ? Object.keys(credentials).sort() : [];
  }
}
