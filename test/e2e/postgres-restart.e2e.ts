import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnService, type ServiceHandle } from '@crs/bench/lib/service';

/**
 * The embedded Postgres killed under a running service (OOM killer, an operator's kill -9): the service starts it
 * again and serves on, and nothing committed before is lost (rather than answering /health with 200 while failing
 * every other request, logging the same connection error until someone restarts it). Runs the built service
 * (`npm install` builds dist/) as its own process, as `npm start` does.
 */
describe('the embedded Postgres killed under the service', () => {
  jest.setTimeout(180_000);
  let service: ServiceHandle;
  beforeAll(async () => {
    service = await spawnService({ env: { LOG_LEVEL: 'warn' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const call = async (method: string, path: string, body?: unknown, form?: Record<string, string>) => {
    const headers: Record<string, string> = { authorization: `Bearer ${service.key}` };
    let payload: string | FormData | undefined;
    if (form) {
      payload = new FormData();
      for (const [k, v] of Object.entries(form)) payload.append(k, v);
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(`${service.baseUrl}${path}`, { method, headers, body: payload });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
  };
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const completed = (id: string) => async () => (await call('GET', `/context/status?database=pgkill&ids=${id}`)).body?.data?.statuses?.[0]?.indexing_status === 'completed';

  it('restarts it, is ready again, and keeps everything committed before', async () => {
    expect((await call('POST', '/databases', { database: 'pgkill' })).status).toBe(202);
    await until('database provisioned', async () => (await call('GET', '/databases/status?database=pgkill')).body?.data?.status === 'ready');
    const before = await call('POST', '/context/ingest', undefined, { type: 'memory', database: 'pgkill', memories: JSON.stringify([{ id: 'before', text: 'The heron fishes at the quiet pond at dawn.' }]) });
    expect(before.status).toBe(200);
    await until('the first memory completed', completed('before'));

    const postmaster = Number(readFileSync(join(service.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(postmaster, 'SIGKILL');
    await until('Postgres seen down', async () => (await fetch(`${service.baseUrl}/ready`)).status === 503, 10_000);

    // Started again: every projection and processor back (none left reporting the outage), the log says why.
    await until('ready again', async () => (await fetch(`${service.baseUrl}/ready`)).status === 200);
    expect(readFileSync(join(service.dataDir, 'service.log'), 'utf8')).toMatch(/embedded Postgres exited unexpectedly[\s\S]*embedded Postgres restarted/);
    const after = await call('POST', '/context/ingest', undefined, { type: 'memory', database: 'pgkill', memories: JSON.stringify([{ id: 'after', text: 'The heron came back to the pond after the storm.' }]) });
    expect(after.status).toBe(200);
    await until('the second memory completed', completed('after'));
    const q = await call('POST', '/query', { database: 'pgkill', query: 'heron pond' });
    expect(q.status).toBe(200);
    expect(q.body.data.chunks.map((c: any) => c.id).sort()).toEqual(['after', 'before']);
  });
});
