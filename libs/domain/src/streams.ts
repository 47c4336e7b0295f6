/** Stream names come from here only. Ids are UUIDs or validated names, so '-' joins are unambiguous per category. */
export const streams = {
  orgDatabases: (orgId: string) => `databases-${orgId}`,
  database: (databaseId: string) => `database-${databaseId}`,
};
