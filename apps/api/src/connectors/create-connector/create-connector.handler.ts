import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import { checkCustomInstructions, checkSyncInterval } from '@crs/domain/connectors/connector-settings';
import { invalid } from '@crs/domain/errors';
import { DEFAULT_COLLECTION } from '@crs/domain/names';
import { CONNECTOR_CREDENTIALS, CONNECTOR_PROVIDERS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import { connectorView, type ConnectorView } from '../connector-view';
import { callProvider, credentialsFor, providerOf } from '../provider-calls';

export interface CreateConnectorInput {
  provider: string;
  database: string;
  collection?: string;
  credentials: unknown;
  customInstructions?: string;
  syncIntervalSeconds?: number;
  providerAccountScope?: string;
  /** omitted: on */
  capturePermissions?: boolean;
}

export type CreateConnectorResult = ConnectorView & { account: { display_name: string; warnings: string[] } };

export const MAX_ACCOUNT_SCOPE_CHARACTERS = 256;

/** Connect one provider account to a database: the credentials are checked with the provider, then sealed. */
export class CreateConnector extends Command<CreateConnectorResult> {
  constructor(readonly caller: Caller, readonly input: CreateConnectorInput) {
    super();
  }
}

/**
 * Every field is checked before the provider is called, and the provider before anything is stored. The credentials
 * are sealed in the vault before `ConnectorCreated` (which carries only their id) and the sealed row is deleted again
 * if the append fails, so no event names a row that does not exist and no row outlives a refused request.
 */
@CommandHandler(CreateConnector)
export class CreateConnectorHandler implements ICommandHandler<CreateConnector> {
  constructor(
    @Inject(CONNECTOR_PROVIDERS) private readonly registry: ProviderRegistry,
    @Inject(CONNECTOR_CREDENTIALS) private readonly vault: ConnectorCredentialVault,
    private readonly databases: DatabaseDirectory,
    private readonly streams: ConnectorStreams,
    private readonly directory: ConnectorDirectory,
  ) {}

  async execute({ caller, input }: CreateConnector): Promise<CreateConnectorResult> {
    const provider = providerOf(this.registry, input.provider);
    const database = await this.databases.resolve(caller.key, input.database);
    const collection = input.collection ?? DEFAULT_COLLECTION;
    const credentials = credentialsFor(provider, input.credentials);
    if (input.customInstructions !== undefined) checkCustomInstructions(input.customInstructions);
    if (input.syncIntervalSeconds !== undefined) checkSyncInterval(input.syncIntervalSeconds);
    if (input.providerAccountScope !== undefined) {
      if (input.providerAccountScope.trim() === '') throw invalid('provider_account_scope may not be blank; omit it to use the account the credentials identify');
      if ([...input.providerAccountScope].length > MAX_ACCOUNT_SCOPE_CHARACTERS) throw invalid(`provider_account_scope is longer than ${MAX_ACCOUNT_SCOPE_CHARACTERS} characters`);
    }
    const identity = await callProvider('checking the credentials', (ctx) => provider.validateCredentials(ctx), credentials);

    const connectorId = randomUUID();
    const credentialsId = randomUUID();
    const ctx = { ...caller.ctx, databaseId: database.id };
    await this.vault.put(caller.key.orgId, credentialsId, credentials);
    try {
      await this.streams.decideConnector(ctx, connectorId, [
        {
          type: 'CreateConnector',
          connectorId,
          provider: provider.description.id,
          databaseId: database.id,
          collection,
          credentialsId,
          customInstructions: input.customInstructions,
          syncIntervalSeconds: input.syncIntervalSeconds,
          providerAccountScope: input.providerAccountScope ?? identity.accountScope,
          captureEnabled: input.capturePermissions,
        },
      ]);
    } catch (err) {
      await this.vault.delete(caller.key.orgId, credentialsId).catch(() => undefined);
      throw err;
    }
    const created = await this.directory.find(caller, connectorId);
    return {
      ...connectorView(created, [], Object.keys(credentials).sort()),
      account: { display_name: identity.displayName, warnings: identity.warnings },
    };
  }
}
