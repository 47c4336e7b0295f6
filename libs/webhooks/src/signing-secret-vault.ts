import type { Sql } from '@crs/persistence/data-source';
import { SealedSecrets } from '@crs/persistence/sealed-secrets';

export const KEY_FILE_NAME = 'webhook-secret.key';

/**
 * Webhook signing secrets, sealed at rest (SealedSecrets) under WEBHOOK_SECRET_KEY or the key file; the log records
 * only that a secret was set, generated or removed.
 */
export class SigningSecretVault extends SealedSecrets {
  constructor(sql: Sql, configuredKey: string | undefined, keyFile: string) {
    super(sql, { table: 'webhook_signing_secrets', purpose: 'crs-webhook-secret', keySetting: 'WEBHOOK_SECRET_KEY', noun: 'signing secret' }, configuredKey, keyFile);
  }
}
