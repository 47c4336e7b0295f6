import autocannon = require('autocannon');
import { latencySummary, round } from '../lib/stats';

export interface LoadResult {
  connections: number;
  durationS: number;
  requests: number;
  rps: number;
  /** Every response's time as autocannon saw it (ms), summarised here (autocannon's own table has no p95). */
  latencyMs: ReturnType<typeof latencySummary>;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/**
 * One bounded autocannon run against 127.0.0.1: `connections` clients, each sending its next request as soon as
 * the previous answer arrives, for `durationS` seconds. `nextBody` is called once per request (fresh query texts).
 */
export async function runLoad(opts: { url: string; path: string; headers?: Record<string, string>; nextBody: () => string; connections: number; durationS: number }): Promise<LoadResult> {
  const host = new URL(opts.url).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`load runs only against 127.0.0.1, not ${host}`);
  const times: number[] = [];
  let non2xx = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: opts.url,
        connections: opts.connections,
        duration: opts.durationS,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path: opts.path,
            headers: { 'content-type': 'application/json', ...(opts.headers ?? {}) },
            setupRequest: (req) => ({ ...req, body: opts.nextBody() }),
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      times.push(ms);
      if (status < 200 || status >= 300) non2xx++;
    });
  });
  return {
    connections: opts.connections,
    durationS: round(result.duration, 2),
    requests: times.length,
    rps: round(times.length / Math.max(result.duration, 1e-9), 1),
    latencyMs: latencySummary(times),
    non2xx: Math.max(non2xx, result.non2xx),
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
