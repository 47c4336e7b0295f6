/** Every query is recorded (stream `query-<databaseId>-<requestId>`), so feedback and audits can find it. */
export interface QueryRecorded {
  type: 'QueryRecorded';
  data: {
    requestId: string;
    databaseId: string;
    collections: string[] | null;
    query: string;
    type: 'memory' | 'knowledge' | 'all';
    mode: 'fast' | 'thinking';
    acl: string[] | null;
    /** ranked results: chunk ids and their item ids */
    results: { chunkId: string; itemId: string; score: number }[];
    /** items read-model position the answer reflects */
    logPosition: number;
    latencyMs: number;
  };
}
