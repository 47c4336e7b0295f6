import { streams } from '@crs/domain/streams';
import { verifyProjection } from '@crs/persistence/projection-verifier';
import { ingestMemories, waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

const DAY = 86_400_000;

/**
 * Recorded queries grow with the traffic: past QUERY_RETENTION_DAYS they leave the log and the read model, except
 * those feedback links to.
 */
describe('query record retention', () => {
  let t: TestApp;
  const ask = async (query: string) => {
    const res = await t.request('POST', '/query', { body: { database: 'retained', query, type: 'memory' } });
    expect(res.status).toBe(200);
    const id = res.body.meta.request_id as string;
    // The record is appended before the answer; its read-model row follows within moments.
    const deadline = Date.now() + 10_000;
    while (!(await t.ds.query('SELECT 1 FROM rm_queries WHERE request_id = $1', [id])).length) {
      if (Date.now() > deadline) throw new Error(`query ${id} was not recorded in time`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return id;
  };
  const recorded = async (requestId: string) => {
    const [row] = await t.ds.query('SELECT 1 FROM rm_queries WHERE request_id = $1', [requestId]);
    const databaseId = (await t.directory.find('default', 'retained'))!.id;
    const events = await t.store.readStream(streams.query(databaseId, requestId));
    return { row: Boolean(row), events: events.length };
  };

  beforeAll(async () => {
    t = await startTestApp('query-retention', { queryRetentionMs: 7 * DAY });
    await t.createDatabase('retained');
    await ingestMemories(t, 'retained', [{ id: 'heron', text: 'A grey heron waits in the shallows for fish.' }]);
    await waitForStatus(t, 'retained', ['heron']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('removes records past the retention from the log and the read model, keeps younger ones and those feedback links to', async () => {
    const old = await ask('heron fish');
    const withFeedback = await ask('grey heron');
    const fb = await t.request('POST', '/feedback', { body: { request_id: withFeedback, feedback: 'right bird', database: 'retained' } });
    expect(fb.body.data.linked).toBe(true);
    expect(await recorded(old)).toEqual({ row: true, events: 1 });

    // A pass at a time within the retention removes nothing.
    expect(await t.queryRetention.runOnce(Date.now() + 6 * DAY)).toBe(0);
    expect(await recorded(old)).toEqual({ row: true, events: 1 });

    await new Promise((r) => setTimeout(r, 20));
    const between = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    const young = await ask('shallows');
    // Seven days after `between`: the first two queries are past the retention, the last one is not.
    expect(await t.queryRetention.runOnce(between + 7 * DAY)).toBe(1);
    expect(await recorded(old)).toEqual({ row: false, events: 0 });
    expect(await recorded(withFeedback)).toEqual({ row: true, events: 1 });
    expect(await recorded(young)).toEqual({ row: true, events: 1 });

    // The read model rebuilt from the log is the live one: the removed record is gone from both.
    const verdict = await verifyProjection(t.runner, t.ds, t.config.databaseUrl, 'queries');
    expect(verdict).toMatchObject({ equal: true });
  });

  it('keeps every record when the retention is 0', async () => {
    const keepAll = new (t.queryRetention.constructor as any)(t.ds, t.store, { info() {}, error() {} }, { retentionMs: 0, everyMs: 1000 });
    const id = await ask('heron');
    expect(await keepAll.runOnce(Date.now() + 400 * DAY)).toBe(0);
    expect(await recorded(id)).toEqual({ row: true, events: 1 });
  });
});
