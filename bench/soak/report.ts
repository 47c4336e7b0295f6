import { environmentMarkdown, type RunEnvironment } from '../lib/env';
import type { SoakResult } from './run-soak';

export interface SoakTarget {
  what: string;
  measured: string;
  target: string;
  met: boolean;
}

const MiB = 2 ** 20;
const pct = (a: number, b: number) => (b === 0 ? Infinity : Math.abs(a - b) / b);

/**
 * The soak's targets: resident memory reaches a plateau (the last five windows within 10% of each other, at most
 * 1 GiB), latency and throughput of the last window within 20% of the second's, at most 4 KB of disk per memory over
 * all stores, no error.
 */
export function soakTargets(r: SoakResult): SoakTarget[] {
  const s = r.samples;
  const targets: SoakTarget[] = [];
  if (s.length >= 2) {
    const last5 = s.slice(-5).map((x) => x.serviceRssMiB);
    const lo = Math.min(...last5);
    const hi = Math.max(...last5);
    const peak = Math.max(...s.slice(-5).map((x) => x.serviceRssMaxMiB ?? x.serviceRssMiB));
    targets.push({
      what: 'service resident memory, last 5 windows (window means; highest reading)',
      measured: `${lo}-${hi} MiB (spread ${Math.round((100 * (hi - lo)) / Math.max(1, lo))}%); peak ${peak} MiB`,
      target: 'within 10%, ≤ 1024 MiB',
      met: hi <= lo * 1.1 && peak <= 1024,
    });
    const second = s[1];
    const last = s[s.length - 1];
    targets.push({
      what: 'p50, last window vs window 2',
      measured: `${second.p50} → ${last.p50} ms`,
      target: 'within 20%',
      met: pct(last.p50, second.p50) <= 0.2,
    });
    targets.push({
      what: 'requests per window, last vs window 2',
      measured: `${second.requests} → ${last.requests}`,
      target: 'within 20%',
      met: pct(last.requests, second.requests) <= 0.2,
    });
  }
  const perMemory = totalDisk(r) / Math.max(1, r.memories.total);
  targets.push({ what: 'disk per memory, all stores, settled', measured: `${(perMemory / 1000).toFixed(2)} KB`, target: '≤ 4 KB', met: perMemory <= 4000 });
  const content = diskShares(r).content / Math.max(1, r.memories.total);
  targets.push({
    what: 'of it, what grows with the content (less the bounded write-ahead log and the retained query history)',
    measured: `${(content / 1000).toFixed(2)} KB`,
    target: '≤ 4 KB',
    met: content <= 4000,
  });
  targets.push({ what: 'errors', measured: String(r.totals.errors), target: '0', met: r.totals.errors === 0 });
  return targets;
}

export const totalDisk = (r: SoakResult) => r.disk.reduce((a, d) => a + d.bytes, 0);

/**
 * The disk split by what it grows with: the write-ahead log is bounded by max_wal_size whatever the content; recorded
 * queries (`rm_queries` and the `QueryRecorded` rows) grow with the traffic and are kept QUERY_RETENTION_DAYS; the rest
 * grows with the content.
 */
export function diskShares(r: SoakResult): { wal: number; queries: number; content: number } {
  const wal = r.disk.filter((d) => d.store.includes('write-ahead')).reduce((a, d) => a + d.bytes, 0);
  const queries =
    r.postgresTables.filter((t) => t.table === 'rm_queries').reduce((a, t) => a + t.bytes, 0) +
    r.postgresEvents.filter((e) => e.type === 'QueryRecorded').reduce((a, e) => a + e.rowBytes, 0);
  return { wal, queries, content: totalDisk(r) - wal - queries };
}

export function soakMarkdown(r: SoakResult, env: RunEnvironment, command: string): string {
  const o = r.options;
  const lines = [
    '# Soak: a steady trickle of writes and queries',
    '',
    `\`${command}\``,
    '',
    environmentMarkdown(env),
    '',
    `Load: ${o.clients} clients for ${o.durationS} s on one database seeded with ${o.seedMemories} memories; each client sends its next request when the previous one is answered: ` +
      `${Math.round(o.mix.query * 100)}% queries (fast, memory, max_results 10), ${Math.round(o.mix.ingest * 100)}% ingests of ${o.memoriesPerIngest} memories, ` +
      `${Math.round((1 - o.mix.query - o.mix.ingest) * 100)}% status reads of 5 ids; seed ${o.seed}. Memories are one generated sentence each ` +
      `(mean ${r.memories.meanChars} characters). Sampled every ${o.sampleS} s. After the load, the pipeline finished the last ingests in ${r.drainS} s, ` +
      `then the service idled ${o.settleS} s before the disk was measured.`,
    '',
    '## Targets',
    '',
    '| what | measured | target | met |',
    '| --- | --- | --- | --- |',
    ...soakTargets(r).map((t) => `| ${t.what} | ${t.measured} | ${t.target} | ${t.met ? 'yes' : '**no**'} |`),
    '',
    '## Per window',
    '',
    '| window | requests (query / ingest / status) | p50 / p99 ms | query p50 ms | errors | service RSS MiB, window mean / peak (at its end: JS heap used of committed / external / mapped files / search caches) | Postgres private RSS MiB | memories |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.samples.map(
      (s) =>
        `| ${s.window} | ${s.requests} (${s.byKind.query} / ${s.byKind.ingest} / ${s.byKind.status}) | ${s.p50} / ${s.p99} | ${s.queryP50} | ${s.errors} | ${s.serviceRssMiB} / ${s.serviceRssMaxMiB ?? '-'} (${s.heapMiB} of ${s.heapCommittedMiB} / ${s.externalMiB} / ${s.fileRssMiB} / ${s.searchCacheMiB}) | ${s.postgresRssMiB} | ${s.memories} |`,
    ),
    '',
    `All requests: ${r.totals.requests}, p50 ${r.totals.latencyMs.p50} / p99 ${r.totals.latencyMs.p99} ms, ${r.totals.errors} errors.`,
    ...(r.totals.firstErrors.length ? ['', 'First errors:', ...r.totals.firstErrors.map((e) => `- ${e}`)] : []),
    '',
    'Where /query time went over the run (mean per call; steps run in parallel, so they add up to more than the total):',
    '',
    '| step | calls | mean ms |',
    '| --- | --- | --- |',
    ...r.querySteps.map((q) => `| ${q.step} | ${q.calls} | ${q.meanMs} |`),
    '',
    `## Disk after settling (${r.memories.total} memories: ${r.memories.seeded} seeded, ${r.memories.ingested} during the load)`,
    '',
    '| store | MB | files | bytes per memory |',
    '| --- | --- | --- | --- |',
    ...r.disk.map((d) => `| ${d.store} | ${(d.bytes / 1e6).toFixed(1)} | ${d.files} | ${Math.round(d.bytes / Math.max(1, r.memories.total))} |`),
    `| **all** | ${(totalDisk(r) / 1e6).toFixed(1)} | ${r.disk.reduce((a, d) => a + d.files, 0)} | ${Math.round(totalDisk(r) / Math.max(1, r.memories.total))} |`,
    '',
    (() => {
      const { wal, queries, content } = diskShares(r);
      const per = (b: number) => `${(b / Math.max(1, r.memories.total) / 1000).toFixed(2)} KB per memory`;
      return `By what it grows with: the write-ahead log ${(wal / 1e6).toFixed(1)} MB (${per(wal)}; bounded, whatever the content), recorded queries ${(queries / 1e6).toFixed(1)} MB (${per(queries)}; rm_queries and the QueryRecorded rows, with the traffic), the content ${(content / 1e6).toFixed(1)} MB (${per(content)}).`;
    })(),
    '',
    `Search index layout: ${r.searchIndex.versions} table versions, ${r.searchIndex.dataFiles} data files, ${r.searchIndex.indexDirs} index directories.`,
    '',
    'Largest Postgres tables (with their indexes and TOAST):',
    '',
    '| table | MB | rows (estimate) |',
    '| --- | --- | --- |',
    ...r.postgresTables.map((t) => `| ${t.table} | ${(t.bytes / 1e6).toFixed(1)} | ${t.rows} |`),
    '',
    `Events in the log by type (${r.postgresEvents.reduce((a, e) => a + e.count, 0)} in all):`,
    '',
    '| type | count | per memory | mean row bytes |',
    '| --- | --- | --- | --- |',
    ...r.postgresEvents.map((e) => `| ${e.type} | ${e.count} | ${(e.count / Math.max(1, r.memories.total)).toFixed(2)} | ${Math.round(e.rowBytes / Math.max(1, e.count))} |`),
    '',
  ];
  return lines.join('\n');
}

export { MiB };
