import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import type { SearchIndex } from '@crs/search/search-index.port';

/** Prometheus metrics: request latency by route and status, projection lag, pipeline queue depth. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'crs_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(
    runner: ProjectionRunner,
    queueDepth?: () => Promise<number>,
    pipelineSteps?: () => ReadonlyMap<string, { seconds: number; items: number }>,
    querySteps?: () => ReadonlyMap<string, { seconds: number; items: number }>,
    caches?: () => Record<string, { bytes: number; entries: number }>,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'crs_' });
    new Gauge({
      name: 'crs_projection_lag_events',
      help: 'Log positions between the head of the event log and each projection checkpoint',
      labelNames: ['projection'],
      registers: [this.registry],
      async collect() {
        for (const s of await runner.status()) this.set({ projection: s.name }, s.lag);
      },
    });
    new Gauge({
      name: 'crs_pipeline_queue_depth',
      help: 'Items waiting in the indexing pipeline',
      registers: [this.registry],
      async collect() {
        this.set(queueDepth ? await queueDepth() : 0);
      },
    });
    new Gauge({
      name: 'crs_cache_bytes',
      help: 'Bytes held by each bounded in-memory cache of this process (search_engine: LanceDB index pages and file metadata; search_resident: small tables held in the process; blobs: recently used content blobs)',
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        for (const [cache, u] of Object.entries(caches?.() ?? {})) this.set({ cache }, u.bytes);
      },
    });
    new Gauge({
      name: 'crs_cache_entries',
      help: 'Entries held by each bounded in-memory cache of this process',
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        for (const [cache, u] of Object.entries(caches?.() ?? {})) this.set({ cache }, u.entries);
      },
    });
    new Gauge({
      name: 'crs_pipeline_step_seconds_total',
      help: 'Wall time this process spent in each indexing pipeline step (batches overlap, so steps can add up to more than the elapsed time)',
      labelNames: ['step'],
      registers: [this.registry],
      collect() {
        for (const [step, t] of pipelineSteps?.() ?? []) this.set({ step }, t.seconds);
      },
    });
    new Gauge({
      name: 'crs_pipeline_step_items_total',
      help: 'Items that went through each indexing pipeline step in this process',
      labelNames: ['step'],
      registers: [this.registry],
      collect() {
        for (const [step, t] of pipelineSteps?.() ?? []) this.set({ step }, t.items);
      },
    });
    new Gauge({
      name: 'crs_query_step_seconds_total',
      help: 'Wall time this process spent in each step of /query (steps run in parallel: engine calls per store, the read-model check, graph context, the QueryRecorded append; total.<mode> is the whole query)',
      labelNames: ['step'],
      registers: [this.registry],
      collect() {
        for (const [step, t] of querySteps?.() ?? []) this.set({ step }, t.seconds);
      },
    });
    new Gauge({
      name: 'crs_query_step_calls_total',
      help: 'Times each step of /query ran in this process',
      labelNames: ['step'],
      registers: [this.registry],
      collect() {
        for (const [step, t] of querySteps?.() ?? []) this.set({ step }, t.items);
      },
    });
  }
}

/** Bytes and entries of every in-memory cache of this process, by name (reported on /metrics). */
export function cacheUsage(blobs: BlobStore, searchIndex: SearchIndex): Record<string, { bytes: number; entries: number }> {
  return { blobs: blobs.cacheUsage(), ...searchIndex.cacheUsage?.() };
}
