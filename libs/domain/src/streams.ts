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
};
