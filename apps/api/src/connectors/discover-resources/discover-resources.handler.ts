import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import { connectorNotFound } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_CREDENTIALS, CONNECTOR_PROVIDERS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { callProvider } from '../provider-calls';

export interface DiscoveredView {
  resource_id: string;
  resource_type: string;
  name: string;
  details: Record<string, unknown>;
  /** configured on this connector (and not removed) */
  configured: boolean;
}

/** What the connector's credentials can reach now, asked of the provider (bounded in time). */
export class DiscoverResources extends Query<{ connector_id: string; resources: DiscoveredView[] }> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

@QueryHandler(DiscoverResources)
export class DiscoverResourcesHandler implements IQueryHandler<DiscoverResources> {
  constructor(
    private readonly directory: ConnectorDirectory,
    @Inject(CONNECTOR_PROVIDERS) private readonly registry: ProviderRegistry,
    @Inject(CONNECTOR_CREDENTIALS) private readonly vault: ConnectorCredentialVault,
  ) {}

  async execute({ caller, connectorId }: DiscoverResources): Promise<{ connector_id: string; resources: DiscoveredView[] }> {
    const c = await this.directory.find(caller, connectorId);
    const provider = this.registry.get(c.settings.provider);
    const credentials = await this.vault.get(c.row.org_id, c.settings.credentialsId);
    // A connector whose provider this build lacks, or whose credentials row is gone, has nothing to discover with.
    if (!provider || !credentials) throw connectorNotFound(connectorId);
    const [found, configured] = await Promise.all([
      callProvider('listing what the credentials can reach', (ctx) => provider.discoverResources(ctx), credentials),
      this.directory.liveResources(c.row.connector_id),
    ]);
    const ids = new Set(configured.map((r) => r.resource_id));
    return {
      connector_id: c.row.connector_id,
      resources: found.map((r) => ({ resource_id: r.resourceId, resource_type: r.resourceType, name: r.name, details: r.details, configured: ids.has(r.resourceId) })),
    };
  }
}
