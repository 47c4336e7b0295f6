/**
 * A thin HTTP client for the service's v2 API (global fetch / FormData), used by every benchmark.
 * Every call goes through the real HTTP interface: nothing here reaches around the service.
 */

export interface MemoryInput {
  id: string;
  text: string;
  title?: string;
  /** JSON-encoded object (database metadata schema attributes) */
  metadata?: string;
  additional_metadata?: Record<string, unknown>;
}

export interface AppKnowledgeInput {
  id: string;
  title?: string;
  content: { text: string };
  acl?: string[];
  metadata?: Record<string, unknown> | string;
  additional_metadata?: Record<string, unknown>;
  app_kind?: string;
  app_provider?: string;
}

export interface FileInput {
  filename: string;
  contentType: string;
  content: string | Buffer;
  /** per-file metadata entry (`file_metadata[i]`): id, title, metadata, additional_metadata, acl */
  meta: { id: string; title?: string; metadata?: Record<string, unknown>; additional_metadata?: Record<string, unknown>; acl?: string[] };
}

export interface QueryBody {
  graph_context?: boolean;
  database: string;
  collection?: string;
  query: string;
  type?: 'memory' | 'knowledge' | 'all';
  max_results?: number;
  alpha?: number | 'auto';
  query_by?: 'hybrid' | 'text';
  metadata_filters?: Record<string, unknown>;
  acl?: string[];
  mode?: 'fast' | 'thinking';
}

export interface QueryChunk {
  id: string;
  chunk_uuid: string;
  chunk_content: string;
  relevancy_score: number;
}

export type IndexingStatus = 'queued' | 'processing' | 'graph_creation' | 'completed' | 'errored' | 'not_found';
export const SEARCHABLE: IndexingStatus[] = ['graph_creation', 'completed'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${body.slice(0, 500)}`);
  }
}

export interface DatabaseStats {
  items: { total: number; memory: { total: number; by_status: Record<string, number>; chunks: number }; knowledge: { total: number; by_status: Record<string, number>; chunks: number } };
  chunks: { memory: number; knowledge: number; total: number };
  embedder: { model: string; dimensions: number };
}

export class CrsClient {
  /** Requests sent again after a 5xx or a network error. */
  retries = 0;

  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  get headers(): Record<string, string> {
    return { authorization: `Bearer ${this.key}`, 'api-version': '2' };
  }

  private async call<T>(method: string, path: string, what: string, init: { json?: unknown; form?: FormData; expect?: number[] } = {}): Promise<T> {
    const headers: Record<string, string> = { ...this.headers };
    let body: string | FormData | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.form) body = init.form;
    // A 5xx or a dropped connection is retried twice (counted in `retries`, reported by the benchmarks); 4xx never is.
    let res: Response | undefined;
    let text = '';
    for (let attempt = 0; ; attempt++) {
      try {
        res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
        text = await res.text();
        if (res.status < 500 || attempt >= 2) break;
      } catch (err) {
        if (attempt >= 2) throw err;
      }
      this.retries++;
      await sleep(500 * (attempt + 1));
    }
    if (!(init.expect ?? [200]).includes(res!.status)) throw new ApiError(res!.status, text, what);
    const parsed = JSON.parse(text);
    return (parsed && typeof parsed === 'object' && 'data' in parsed ? parsed.data : parsed) as T;
  }

  /** Creates a database and polls /databases/status until provisioned. Returns its id. */
  async createDatabase(database: string, extra: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<string> {
    const created = await this.call<{ database_id: string }>('POST', '/databases', `create database ${database}`, { json: { database, ...extra }, expect: [202] });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const st = await this.call<{ provisioned: boolean }>('GET', `/databases/status?database=${encodeURIComponent(database)}`, 'database status');
      if (st.provisioned) return created.database_id;
      if (Date.now() > deadline) throw new Error(`database ${database} not provisioned after ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  async ingestMemories(database: string, memories: MemoryInput[], collection?: string): Promise<{ success_count: number; failed_count: number }> {
    const form = new FormData();
    form.append('type', 'memory');
    form.append('database', database);
    if (collection) form.append('collection', collection);
    form.append('memories', JSON.stringify(memories));
    return this.call('POST', '/context/ingest', 'ingest memories', { form });
  }

  async ingestKnowledge(database: string, items: AppKnowledgeInput[], collection?: string): Promise<{ success_count: number; failed_count: number }> {
    const form = new FormData();
    form.append('type', 'knowledge');
    form.append('database', database);
    if (collection) form.append('collection', collection);
    form.append('app_knowledge', JSON.stringify(items));
    return this.call('POST', '/context/ingest', 'ingest knowledge', { form });
  }

  /** Files (at most 20 per request) as `documents` parts with `file_metadata` aligned to them. */
  async ingestFiles(database: string, files: FileInput[], collection?: string): Promise<{ success_count: number; failed_count: number }> {
    const form = new FormData();
    form.append('type', 'knowledge');
    form.append('database', database);
    if (collection) form.append('collection', collection);
    for (const f of files) form.append('documents', new Blob([f.content], { type: f.contentType }), f.filename);
    form.append('file_metadata', JSON.stringify(files.map((f) => f.meta)));
    return this.call('POST', '/context/ingest', 'ingest files', { form });
  }

  /** Statuses of up to 100 ids. */
  async statuses(database: string, ids: string[], collection?: string): Promise<{ id: string; indexing_status: IndexingStatus; error_code: string | null; error_message: string | null }[]> {
    const q = new URLSearchParams({ database, ...(collection ? { collection } : {}) });
    for (const id of ids) q.append('ids', id);
    const data = await this.call<{ statuses: any[] }>('GET', `/context/status?${q}`, 'context status');
    return data.statuses;
  }

  /** Wall seconds and items per indexing pipeline step so far, from /metrics (crs_pipeline_step_*_total). */
  async pipelineSteps(): Promise<Record<string, { seconds: number; items: number }>> {
    return this.steps('crs_pipeline_step_(seconds|items)_total');
  }

  /** /query steps: wall seconds and calls per step (crs_query_step_*). */
  async querySteps(): Promise<Record<string, { seconds: number; items: number }>> {
    return this.steps('crs_query_step_(seconds|calls)_total');
  }

  private async steps(metric: string): Promise<Record<string, { seconds: number; items: number }>> {
    const text = await (await fetch(`${this.baseUrl}/metrics`, { headers: this.headers })).text();
    const out: Record<string, { seconds: number; items: number }> = {};
    for (const m of text.matchAll(new RegExp(`^${metric}\\{step="([^"]+)"\\} ([0-9.e+-]+)$`, 'gm'))) {
      const step = (out[m[2]] ??= { seconds: 0, items: 0 });
      step[m[1] === 'seconds' ? 'seconds' : 'items'] = Number(m[3]);
    }
    return out;
  }

  async stats(database: string): Promise<DatabaseStats> {
    return this.call('GET', `/databases/stats?database=${encodeURIComponent(database)}`, 'database stats');
  }

  async query(body: QueryBody): Promise<QueryChunk[]> {
    const data = await this.call<{ chunks: QueryChunk[] }>('POST', '/query', 'query', { json: body });
    return data.chunks;
  }

  /** A query with the envelope's meta (request_id, latency_ms: server-side time) and the client-side time. */
  async queryTimed(body: QueryBody): Promise<{ chunks: QueryChunk[]; requestId: string; serverMs: number; clientMs: number }> {
    const t = performance.now();
    const res = await fetch(`${this.baseUrl}/query`, { method: 'POST', headers: { ...this.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    const clientMs = performance.now() - t;
    if (res.status !== 200) throw new ApiError(res.status, text, 'query');
    const parsed = JSON.parse(text);
    return { chunks: parsed.data.chunks, requestId: parsed.meta.request_id, serverMs: Number(parsed.meta.latency_ms), clientMs };
  }

  /**
   * Waits until every id has one of `statuses` (default: completed), polling /context/status 100 ids at a time.
   * Items already seen in a final state are not asked again. Throws on errored items unless allowErrored.
   */
  async waitForIds(database: string, ids: string[], opts: { statuses?: IndexingStatus[]; collection?: string; stallMs?: number; pollMs?: number; onProgress?: (done: number) => void } = {}): Promise<void> {
    const wanted = new Set(opts.statuses ?? ['completed']);
    const pending = new Set(ids);
    // Slow indexing is a finding, not a failure: give up only when nothing progresses for stallMs (default 10 min).
    const stallMs = opts.stallMs ?? 10 * 60_000;
    let deadline = Date.now() + stallMs;
    while (pending.size) {
      const batch = [...pending].slice(0, 100);
      const st = await this.statuses(database, batch, opts.collection);
      let progressed = false;
      for (const s of st) {
        if (s.indexing_status === 'errored') throw new Error(`item ${s.id} errored: ${s.error_code} ${s.error_message}`);
        if (wanted.has(s.indexing_status)) {
          pending.delete(s.id);
          progressed = true;
        }
      }
      opts.onProgress?.(ids.length - pending.size);
      if (!pending.size) return;
      if (progressed) deadline = Date.now() + stallMs;
      if (Date.now() > deadline) throw new Error(`${pending.size} item(s) did not reach ${[...wanted].join('/')} (no progress for ${stallMs} ms)`);
      if (!progressed) await sleep(opts.pollMs ?? 100);
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with at most `concurrency` in flight; results in input order. */
export async function mapPool<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}
