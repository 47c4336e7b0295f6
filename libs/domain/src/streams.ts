/** Stream names come from here only. Ids are UUIDs, validated names or hex keys, so '-' joins are unambiguous per category. */
export const streams = {
  orgDatabases: (orgId: string) => `databases-${orgId}`,
  database: (databaseId: string) => `database-${databaseId}`,
  item: (databaseId: string, itemKey: string) => `item-${databaseId}-${itemKey}`,
  query: (databaseId: string, requestId: string) => `query-${databaseId}-${requestId}`,
};
