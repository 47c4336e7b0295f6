import { createHash } from 'node:crypto';

/** Stream names come from here only. Ids are UUIDs, validated names or hex keys, so '-' joins are unambiguous per category. */
export const streams = {
  orgDatabases: (orgId: string) => `databases-${orgId}`,
  database: (databaseId: string) => `database-${databaseId}`,
  item: (databaseId: string, itemKey: string) => `item-${databaseId}-${itemKey}`,
  query: (databaseId: string, requestId: string) => `query-${databaseId}-${requestId}`,
  /** one stream per submission: a later one never replaces an earlier one */
  feedback: (feedbackId: string) => `feedback-${feedbackId}`,
  /** the organization's indexing webhook registration and signing-secret changes */
  webhook: (orgId: string) => `webhooks-${orgId}`,
  /** one delivery's attempts and manual retries (delivery ids are `dlv_<uuid>`) */
  webhookDelivery: (deliveryId: string) => `delivery-${deliveryId}`,
  /** one connector's settings and lifecycle (connector ids are UUIDs) */
  connector: (connectorId: string) => `connector-${connectorId}`,
  /**
   * one resource's settings, access rule, cursor and sync history. A resource id may hold any character (a
   * `schema.table` name, a path), so the stream is named by its sha256 in hex.
   */
  connectorResource: (connectorId: string, resourceId: string) => `connector-resource-${connectorId}-${createHash('sha256').update(resourceId, 'utf8').digest('hex')}`,
};
