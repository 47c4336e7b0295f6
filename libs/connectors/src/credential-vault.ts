import type { Sql } from '@crs/persistence/data-source';
import { SealedSecrets } from '@crs/persistence/sealed-secrets';
import type { Credentials } from './provider.port';

export const CONNECTOR_KEY_FILE_NAME = 'connector-secret.key';

/**
 * Connector credentials, sealed at rest (SealedSecrets) under CONNECTOR_SECRET_KEY or the key file `connector-secret.key`
 * under DATA_DIR. The log carries only the id of a credentials row (`ConnectorCreated`, `ConnectorCredentialsRotated`);
 * the credentials are never logged, returned or appended.
 */
export class ConnectorCredentialVault {
  private readonly sealed: SealedSecrets;

  constructor(sql: Sql, configuredKey: string | undefined, keyFile: string) {
    this.sealed = new SealedSecrets(sql, { table: 'connector_credentials', purpose: 'crs-connector-credentials', keySetting: 'CONNECTOR_SECRET_KEY', noun: 'connector credentials' }, configuredKey, keyFile);
  }

  init(): Promise<void> {
    return this.sealed.init();
  }

  put(orgId: string, credentialsId: string, credentials: Credentials): Promise<void> {
    return this.sealed.put(orgId, credentialsId, JSON.stringify(credentials));
  }

  /** The credentials in clear, or null when the row is gone (the connector was deleted). */
  async get(orgId: string, credentialsId: string): Promise<Credentials | null> {
    const text = await this.sealed.get(orgId, credentialsId);
    return text === null ? null : JSON.parse(text);
  }

  delete(orgId: string, credentialsId: string): Promise<void> {
    return this.sealed.delete(orgId, credentialsId);
  }
}
