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
    /**
     * Thinking mode's forceful relations: the linked chunks returned in `additional_context`, each with the result
     * chunk that linked it, so the log shows everything a query disclosed. Absent when there were none (and on events
     * of versions that did not record them).
     */
    additionalContext?: { chunkId: string; itemId: string; linkedFrom: string }[];
    /** items read-model position the answer reflects */
    logPosition: number;
    latencyMs: number;
  };
}
