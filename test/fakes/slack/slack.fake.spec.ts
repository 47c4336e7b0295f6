import {
  ErrorCode,
  LogLevel,
  WebClient,
  type ConversationsHistoryResponse,
  type ConversationsListResponse,
  type UsersListResponse,
  type WebAPICallResult,
  type WebAPIPlatformError,
  type WebAPIRateLimitedError,
} from '@slack/web-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DATA_DIR } from '../../../bench/quality/datasets';
import type { RunningFake } from '../loopback-server';
import { SlackFake, type SlackMessage } from './slack-fake';

/** The real Slack export, in the shared bench data the benchmarks read too (bench/quality/datasets.ts). */
const EXPORT_ZIP = join(DEFAULT_DATA_DIR, 'slack-export-sample/testarchive.zip');
if (!existsSync(EXPORT_ZIP)) throw new Error(`Slack export not found at ${EXPORT_ZIP}: the Slack fake serves it, so its tests cannot run`);
const ENRIQUE = 'C0JGLMMNX';
const SAILOR = 'C0JL6CGQ2';

/** Fast retries: the switches are about whether the client retries, not about how long it waits. */
const fastRetries = { retries: 3, factor: 1, minTimeout: 5, maxTimeout: 5 };

/** Every page `WebClient.paginate` yields, typed as the method's response (paginate itself yields the base type). */
async function allPages<T extends WebAPICallResult>(pages: AsyncIterable<WebAPICallResult>): Promise<T[]> {
  const seen: T[] = [];
  for await (const page of pages) seen.push(page as T);
  return seen;
}

const messagesOf = (pages: { messages?: SlackMessage[] }[]): SlackMessage[] => pages.flatMap((p) => p.messages ?? []);

describe('Slack Web API fake, driven by @slack/web-api', () => {
  let fake: SlackFake;
  let server: RunningFake;
  let slack: WebClient;

  beforeEach(async () => {
    fake = new SlackFake();
    await fake.loadExport(EXPORT_ZIP, { U0BMYT2FL: 'harry@example.test', U0BMS113R: 'hermione@example.test' });
    server = await fake.start();
    slack = new WebClient(fake.token, { slackApiUrl: `${server.url}/api/`, retryConfig: fastRetries, logLevel: LogLevel.ERROR });
  });

  afterEach(() => fake.stop());

  it('checks the token with auth.test', async () => {
    const me = await slack.auth.test();
    expect(me).toMatchObject({ ok: true, team_id: 'T0BMHLSRH', user_id: 'UCRSBOT01' });
  });

  it('lists the export channels one page at a time through next_cursor', async () => {
    const pages = await allPages<ConversationsListResponse>(slack.paginate('conversations.list', { types: 'public_channel,private_channel', limit: 1 }));
    expect(pages.map((p) => p.channels!.map((c) => c.name))).toEqual([['enrique'], ['traveling-sailor']]);
    expect(pages[0].channels).toEqual([expect.objectContaining({ id: ENRIQUE, is_private: false, num_members: 4, created: 1452837318 })]);
  });

  it('pages through the whole history of the real export, newest first, with no gap or duplicate', async () => {
    const enrique = await allPages<ConversationsHistoryResponse>(slack.paginate('conversations.history', { channel: ENRIQUE, limit: 20 }));
    const sailor = await allPages<ConversationsHistoryResponse>(slack.paginate('conversations.history', { channel: SAILOR, limit: 20 }));
    expect(enrique).toHaveLength(6);
    expect(sailor).toHaveLength(3);
    const enriqueTs = messagesOf(enrique).map((m) => m.ts!);
    const sailorTs = messagesOf(sailor).map((m) => m.ts!);
    expect([enriqueTs.length, sailorTs.length]).toEqual([102, 56]);
    expect(new Set([...enriqueTs, ...sailorTs]).size).toBe(158);
    expect(enriqueTs[0]).toBe('1459233874.000036');
    expect(enriqueTs.at(-1)).toBe('1452837318.000002');
    expect([...enriqueTs].sort((a, b) => Number(b) - Number(a))).toEqual(enriqueTs);
    expect(messagesOf(enrique).at(-1)).toMatchObject({ subtype: 'channel_join', user: 'U0BMQB6JE' });
    expect(enrique.at(-1)).toMatchObject({ has_more: false });
  });

  it('resolves channel members to emails where the workspace reveals them', async () => {
    const members = await slack.conversations.members({ channel: ENRIQUE });
    const users = await allPages<UsersListResponse>(slack.paginate('users.list', { limit: 3 }));
    const emailById = new Map(users.flatMap((p) => p.members!.map((u) => [u.id, u.profile?.email])));
    expect(users).toHaveLength(2);
    expect(members.members).toEqual(['U0BMM2FEH', 'U0BMQB6JE', 'U0BMS113R', 'U0BMYT2FL']);
    expect(members.members!.map((id) => emailById.get(id))).toEqual([undefined, undefined, 'hermione@example.test', 'harry@example.test']);
  });

  it('follows a channel from its last message ts, and a look-back window finds edits, replies and deletions', async () => {
    const cursor = '1459233874.000036';
    fake.postMessage(ENRIQUE, { ts: '1459300000.000001', user: 'U0BMYT2FL', text: 'new after the cursor' });
    fake.editMessage(ENRIQUE, '1459233874.000036', 'edited text', { user: 'U0BMQB6JE', ts: '1459300001.000000' });
    const parent = fake.messagesOf(ENRIQUE).find((m) => m.user === 'U0BMQB6JE' && m.subtype === undefined)!;
    fake.reply(ENRIQUE, parent.ts!, { ts: '1459300002.000001', user: 'U0BMS113R', text: 'a late reply to an old thread' });
    fake.deleteMessage(ENRIQUE, '1452837318.000002');

    const sinceCursor = await slack.conversations.history({ channel: ENRIQUE, oldest: cursor });
    expect(sinceCursor.messages!.map((m) => m.text)).toEqual(['new after the cursor']);

    const lookBack = await slack.conversations.history({ channel: ENRIQUE, oldest: '1459233000', inclusive: true });
    expect(lookBack.messages!.find((m) => m.ts === cursor)).toMatchObject({ text: 'edited text', edited: { ts: '1459300001.000000' } });

    const old = await allPages<ConversationsHistoryResponse>(slack.paginate('conversations.history', { channel: ENRIQUE, limit: 50 }));
    const threaded = messagesOf(old).find((m) => m.ts === parent.ts)!;
    expect(threaded).toMatchObject({ reply_count: 1, latest_reply: '1459300002.000001' });
    expect(messagesOf(old).some((m) => m.ts === '1459300002.000001')).toBe(false);
    expect(messagesOf(old).some((m) => m.ts === '1452837318.000002')).toBe(false);
    expect(messagesOf(old)).toHaveLength(102);

    const thread = await slack.conversations.replies({ channel: ENRIQUE, ts: parent.ts! });
    expect(thread.messages!.map((m) => m.ts)).toEqual([parent.ts, '1459300002.000001']);
  });

  it('keeps pages consistent when messages are posted and deleted during a crawl', async () => {
    const firstPage = await slack.conversations.history({ channel: SAILOR, limit: 20 });
    const unseen = firstPage.messages!.length;
    fake.postMessage(SAILOR, { ts: '1459400000.000001', user: 'U0BMYT2FL', text: 'posted mid-crawl' });
    const notYetRead = fake.messagesOf(SAILOR)[0].ts!;
    fake.deleteMessage(SAILOR, notYetRead);
    let cursor = firstPage.response_metadata!.next_cursor;
    const rest: SlackMessage[] = [];
    while (cursor) {
      const page = await slack.conversations.history({ channel: SAILOR, limit: 20, cursor });
      rest.push(...page.messages!);
      cursor = page.response_metadata?.next_cursor;
    }
    expect(unseen + rest.length).toBe(55);
    expect(rest.some((m) => m.ts === notYetRead || m.text === 'posted mid-crawl')).toBe(false);
  });

  it('captures permission-only changes: a private channel, a new member, a channel made private', async () => {
    fake.addChannel({ id: 'G0PRIVATE1', name: 'core-team', is_private: true, created: 1459000000, creator: 'U0BMQB6JE' }, ['U0BMQB6JE']);
    const before = await slack.conversations.list({ types: 'public_channel,private_channel' });
    expect(before.channels!.map((c) => [c.id, c.is_private])).toEqual([[ENRIQUE, false], [SAILOR, false], ['G0PRIVATE1', true]]);
    expect((await slack.conversations.list({ types: 'public_channel' })).channels).toHaveLength(2);

    fake.addMember('G0PRIVATE1', 'U0BMYT2FL');
    fake.setPrivate(SAILOR, true);
    expect((await slack.conversations.members({ channel: 'G0PRIVATE1' })).members).toEqual(['U0BMQB6JE', 'U0BMYT2FL']);
    expect((await slack.conversations.info({ channel: SAILOR })).channel).toMatchObject({ is_private: true });
    expect((await slack.conversations.history({ channel: SAILOR, limit: 999 })).messages).toHaveLength(56);
  });

  it('honours Retry-After on a 429 and then answers', async () => {
    fake.switches.rateLimitNext(1, 1);
    const started = Date.now();
    const page = await slack.conversations.history({ channel: ENRIQUE, limit: 5 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(page.messages).toHaveLength(5);
    expect(fake.switches.requests.filter((r) => r.includes('conversations.history'))).toHaveLength(2);
  });

  it('surfaces a 429 as a typed rate-limited error carrying Retry-After when the client is told not to wait', async () => {
    const deferring = new WebClient(fake.token, { slackApiUrl: `${server.url}/api/`, rejectRateLimitedCalls: true, logLevel: LogLevel.ERROR });
    fake.switches.rateLimitNext(1, 120);
    const error = (await deferring.conversations.history({ channel: ENRIQUE }).catch((e: unknown) => e)) as WebAPIRateLimitedError;
    expect(error.code).toBe(ErrorCode.RateLimitedError);
    expect(error.retryAfter).toBe(120);
  });

  it('retries a burst of 5xx and then answers', async () => {
    fake.switches.failNext(2, 503);
    const page = await slack.conversations.history({ channel: ENRIQUE, limit: 3 });
    expect(page.messages).toHaveLength(3);
    expect(page.messages![0].ts).toBe('1459233874.000036');
    expect(fake.switches.requests.filter((r) => r.includes('conversations.history'))).toHaveLength(3);
  });

  it('fails with token_revoked when the token is revoked mid-sync', async () => {
    fake.switches.afterRequests(2, () => fake.switches.revokeToken(fake.token));
    const pages: unknown[] = [];
    const error = (await (async () => {
      for await (const page of slack.paginate('conversations.history', { channel: ENRIQUE, limit: 20 })) pages.push(page);
    })().catch((e: unknown) => e)) as WebAPIPlatformError;
    expect(pages).toHaveLength(2);
    expect(error.code).toBe(ErrorCode.PlatformError);
    expect(error.data.error).toBe('token_revoked');
  });

  it('accepts a revoked token again once it is restored', async () => {
    fake.switches.revokeToken(fake.token);
    await expect(slack.auth.test()).rejects.toMatchObject({ code: ErrorCode.PlatformError, data: { error: 'token_revoked' } });
    fake.switches.restoreToken(fake.token);
    await expect(slack.auth.test()).resolves.toMatchObject({ ok: true });
  });

  it("names the token's scopes and the channel's workspace, and hides what the app is not in", async () => {
    fake.scopes = ['channels:read', 'channels:history'];
    const me = await slack.auth.test();
    expect(me.response_metadata?.scopes).toEqual(['channels:read', 'channels:history']);
    expect((await slack.conversations.info({ channel: ENRIQUE })).channel).toMatchObject({ context_team_id: 'T0BMHLSRH', is_member: true, num_members: 4 });

    fake.setAppMember(ENRIQUE, false);
    expect((await slack.conversations.info({ channel: ENRIQUE })).channel).toMatchObject({ is_member: false });
    await expect(slack.conversations.history({ channel: ENRIQUE })).rejects.toMatchObject({ data: { error: 'not_in_channel' } });
    fake.addChannel({ id: 'G0PRIVATE2', name: 'secret', is_private: true }, ['U0BMQB6JE']);
    fake.setAppMember('G0PRIVATE2', false);
    const listed = await slack.conversations.list({ types: 'public_channel,private_channel' });
    expect(listed.channels!.map((c) => c.id)).toEqual([ENRIQUE, SAILOR]);
    await expect(slack.conversations.members({ channel: 'G0PRIVATE2' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
  });

  it('refuses a wrong token as invalid_auth', async () => {
    const stranger = new WebClient('xoxb-someone-else', { slackApiUrl: `${server.url}/api/`, retryConfig: fastRetries, logLevel: LogLevel.ERROR });
    await expect(stranger.auth.test()).rejects.toMatchObject({ code: ErrorCode.PlatformError, data: { error: 'invalid_auth' } });
  });
});
