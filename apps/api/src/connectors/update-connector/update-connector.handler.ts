import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import { checkCustomInstructions, checkSyncInterval } from '@crs/domain/connectors/connector-settings';
import type { ConnectorCommand } from '@crs/domain/connectors/connector.decider';
import { connectorNotFound } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_CREDENTIALS, CONNECTOR_PROVIDERS, CONNECTOR_SYNC_REQUESTS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import type { ConnectorView } from '../connector-view';
import { callProvider, credentialsFor } from '../provider-calls';

export interface UpdateConnectorInput {
  syncIntervalSeconds?: number;
  customInstructions?: string;
  credentials?: unknown;
}

/** Change a connector's interval, instructions or credentials; only what is sent changes. */
export class UpdateConnector extends Command<ConnectorView> {
  constructor(readonly caller: Caller, readonly connectorId: string, readonly input: UpdateConnectorInput) {
    super();
  }
}

/**
 * Every sent value is checked before anything is stored (a refused request changes nothing). New credentials are
 * checked with the provider, sealed under a new id, and made current by `ConnectorCredentialsRotated` in the same
 * append as the settings change; once the read model shows it, the previous sealed row is deleted and a sync is
 * requested, so a connector that was `unauthorized` recovers without waiting for its interval.
 */
@CommandHandler(UpdateConnector)
export class UpdateConnectorHandler implements ICommandHandler<UpdateConnector> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
    @Inject(CONNECTOR_PROVIDERS) private readonly registry: ProviderRegistry,
    @Inject(CONNECTOR_CREDENTIALS) private readonly vault: ConnectorCredentialVault,
    @Inject(CONNECTOR_SYNC_REQUESTS) private readonly syncRequests: SyncRequests,
  ) {}

  async execute({ caller, connectorId, input }: UpdateConnector): Promise<ConnectorView> {
    const c = await this.directory.find(caller, connectorId);
    const id = c.row.connector_id;
    if (input.syncIntervalSeconds !== undefined) checkSyncInterval(input.syncIntervalSeconds);
    if (input.customInstructions !== undefined) checkCustomInstructions(input.customInstructions);
    let newCredentials: { id: string; values: Record<string, unknown> } | undefined;
    if (input.credentials !== undefined) {
      const provider = this.registry.get(c.settings.provider);
      if (!provider) throw connectorNotFound(connectorId);
      const values = credentialsFor(provider, input.credentials);
      await callProvider('checking the new credentials', (ctx) => provider.validateCredentials(ctx), values);
      newCredentials = { id: randomUUID(), values: { ...values } };
    }
    const commands: ConnectorCommand[] = [];
    if (input.syncIntervalSeconds !== undefined || input.customInstructions !== undefined) {
      commands.push({ type: 'ChangeConnectorSettings', connectorId: id, syncIntervalSeconds: input.syncIntervalSeconds, customInstructions: input.customInstructions });
    }
    if (newCredentials) commands.push({ type: 'RotateCredentials', connectorId: id, credentialsId: newCredentials.id });
    if (commands.length === 0) return this.directory.view(c);

    if (newCredentials) await this.vault.put(c.row.org_id, newCredentials.id, newCredentials.values);
    let events;
    try {
      ({ events } = await this.streams.decideConnector({ ...caller.ctx, databaseId: c.database.id }, id, commands));
    } catch (err) {
      if (newCredentials) await this.vault.delete(c.row.org_id, newCredentials.id).catch(() => undefined);
      throw err;
    }
    for (const e of events) {
      if (e.type !== 'ConnectorCredentialsRotated') continue;
      await this.vault.delete(c.row.org_id, e.data.previousCredentialsId);
      await this.syncRequests.request(id);
    }
    return this.directory.view(await this.directory.find(caller, id));
  }
}
