import { AuthError, ConfigurationError, RateLimitedError, ResourceGoneError, ScopeError, TargetForbiddenError, TransientError } from '@crs/connectors/provider-errors';
import type { ResourceConfig, SyncEvent } from '@crs/connectors/provider.port';
import { SlackProvider } from '@crs/connectors/providers/slack/slack.provider';
import { reconcile } from '@crs/connectors/reconcile';
import type { RunningFake } from '../fakes/loopback-server';
import type { SlackFake } from '../fakes/slack/slack-fake';
import {
  BOT_USER,
  checkpoints,
  contextFor,
  drain,
  ENRIQUE,
  HAMZA,
  HANNIBAL,
  HARRY,
  HERMIONE,
  lastCursor,
  SAILOR,
  slackProviderFor,
  startSlackFake,
  TEAM,
  upserts,
  WORKSPACE_GROUP,
} from './slack-fixture';

/**
 * The Slack provider against the fake Web API serving the real export, through `@slack/web-api`: what it discovers,
 * how it pages, what an incremental sync reads, how edits, late replies, back-dated and deleted messages are found,
 * how throttling, server errors and a revoked token end a sync, and what permission it captures. The sync engine is not
 * involved (slack.provider.int.ts and conformance-slack.int.ts drive it); the listing is compared with `reconcile`, as
 * the engine does.
 */
const channel = (id: string, options?: Record<string, unknown>): ResourceConfig => ({ resourceId: id, resourceType: 'channel', name: id, ...(options ? { options } : {}) });
const calls = (fake: SlackFake, from = 0) => fake.switches.requests.slice(from).map((r) => r.replace(/^POST \/api\//, ''));
/** Top-level messages of a channel in the fake, newest first, as conversations.history lists them. */
const topLevel = (fake: SlackFake, id: string) =>
  fake
    .messagesOf(id)
    .filter((m) => m.thread_ts === undefined || m.thread_ts === m.ts)
    .reverse();

describe('Slack provider', () => {
  let fake: SlackFake;
  let server: RunningFake;
  let provider: SlackProvider;
  let now: Date;

  beforeEach(async () => {
    ({ fake, server } = await startSlackFake());
    now = new Date('2031-05-01T12:00:00Z');
    provider = slackProviderFor(server, { clock: () => now });
  });
  afterEach(() => fake.stop());

  const ctx = () => contextFor(fake);
  const sync = (resource: ResourceConfig, cursor: string | null = null) => drain(provider.sync(ctx(), resource, cursor));
  const listing = (resource: ResourceConfig) => drain(provider.listExistingIds(ctx(), resource));
  const fetch = (resource: ResourceConfig, ids: string[]) => drain(provider.fetchDocuments(ctx(), resource, ids));
  /** What the engine holds after a sync: each document's id and content hash. */
  const held = (events: SyncEvent[]) => new Map(upserts(events).map((d) => [d.id, d.contentHash]));

  describe('credentials and discovery', () => {
    it('validates the bot token: the workspace id as the account scope, no warnings with every scope', async () => {
      await expect(provider.validateCredentials(ctx())).resolves.toEqual({ accountScope: TEAM, displayName: 'crs-bot in fake-workspace', warnings: [] });
      expect(calls(fake)).toEqual(['auth.test']);
    });

    it('warns of missing scopes, and says what a missing users:read.email means for private channels', async () => {
      fake.scopes = ['channels:read', 'channels:history', 'users:read'];
      const { warnings } = await provider.validateCredentials(ctx());
      expect(warnings).toEqual([
        'The token lacks groups:read, groups:history: channels that need them cannot be listed or synced. Add the scopes and reinstall the app.',
        "The token lacks users:read.email, so no member's email is visible: private channels cannot be captured as their members, and each falls back to its resource's acl (set one on every private channel).",
      ]);
    });

    it('refuses a wrong, revoked or malformed token with a message that says what to do, and never echoes it', async () => {
      const wrong = provider.validateCredentials({ credentials: { bot_token: 'xoxb-not-this-one' } });
      await expect(wrong).rejects.toBeInstanceOf(AuthError);
      await expect(wrong).rejects.toThrow('Slack refused the bot token (invalid_auth: Slack does not recognise the token). Reinstall the app if needed and set its bot token (xoxb-…) on the connector.');
      fake.switches.revokeToken(fake.token);
      const revoked = (await provider.validateCredentials(ctx()).catch((e: unknown) => e)) as AuthError;
      expect(revoked).toBeInstanceOf(AuthError);
      expect(revoked.message).toMatch(/token_revoked: the token was revoked/);
      expect(revoked.message).not.toContain(fake.token);
      await expect(provider.validateCredentials({ credentials: { bot_token: 'hunter2' } })).rejects.toThrow(ConfigurationError);
      await expect(provider.validateCredentials({ credentials: {} })).rejects.toThrow('The credentials need bot_token');
    });

    it('discovers the public channels and the private ones the app is in, with how their access is captured', async () => {
      fake.addChannel({ id: 'G0CORE0001', name: 'core-team', is_private: true, created: 1459000000 }, [HAMZA, HARRY, BOT_USER]);
      fake.addChannel({ id: 'G0OPEN0001', name: 'leads', is_private: true, created: 1459000000 }, [HARRY, HERMIONE, BOT_USER]);
      fake.addChannel({ id: 'G0HIDDEN01', name: 'not-for-the-app', is_private: true }, [HARRY]);
      fake.setAppMember('G0HIDDEN01', false);
      fake.setAppMember(SAILOR, false);
      const found = await provider.discoverResources(ctx());
      expect(found.map((r) => [r.resourceId, r.resourceType, r.name])).toEqual([
        [ENRIQUE, 'channel', 'enrique'],
        [SAILOR, 'channel', 'traveling-sailor'],
        ['G0CORE0001', 'channel', 'core-team'],
        ['G0OPEN0001', 'channel', 'leads'],
      ]);
      expect(found[0].details).toEqual({ is_private: false, is_archived: false, is_member: true, num_members: 4, topic: null, purpose: null, created_at: '2016-01-15T05:55:18.000Z', access: 'workspace', unresolved_members: 0 });
      expect(found[1].details).toMatchObject({ is_member: false, note: 'The app is not a member: invite it to the channel to sync it.' });
      // hamza's email is hidden: the channel falls back to its resource rule, and says how many members it could not name
      expect(found[2].details).toMatchObject({ is_private: true, access: 'unresolved_members', unresolved_members: 1, num_members: 3 });
      expect(found[3].details).toMatchObject({ is_private: true, access: 'members', unresolved_members: 0 });
      // one listing, the directory once, one member list per private channel the app is in
      expect(calls(fake)).toEqual(['conversations.list', 'users.list', 'conversations.members', 'conversations.members']);
    });
  });

  describe('syncing the real export', () => {
    it('syncs every message of both channels, one document per top-level message, a checkpoint after each page', async () => {
      const enrique = await sync(channel(ENRIQUE, { page_size: 20 }));
      const sailor = await sync(channel(SAILOR, { page_size: 20 }));
      expect(upserts(enrique)).toHaveLength(102);
      expect(upserts(sailor)).toHaveLength(56);
      expect(checkpoints(enrique)).toHaveLength(6);
      expect(enrique[enrique.length - 1].kind).toBe('checkpoint');
      expect(upserts(enrique).map((d) => d.id)).toEqual(topLevel(fake, ENRIQUE).map((m) => m.ts));
      expect(new Set([...upserts(enrique), ...upserts(sailor)].map((d) => d.id)).size).toBe(158);
      expect(calls(fake)).toEqual([...Array(6).fill('conversations.history'), ...Array(3).fill('conversations.history')]);

      const sa = upserts(enrique).find((d) => d.id === '1458211102.000009')!;
      expect(sa).toEqual({
        id: '1458211102.000009',
        title: "Essentially what I'm getting from this is that SA is just a bad metaheuristic for us to try and apply to huge problem s…",
        content: { kind: 'text', text: "@U0BMQB6JE at 2016-03-17T10:38:22.000Z:\nEssentially what I'm getting from this is that SA is just a bad metaheuristic for us to try and apply to huge problem set and to effectively parallelize" },
        updatedAt: '2016-03-17T10:38:22.000Z',
        contentHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        metadata: { channel_id: ENRIQUE, ts: '1458211102.000009', author: HAMZA, last_activity_at: '2016-03-17T10:38:22.000Z' },
        filterableFields: { channel: ENRIQUE, author: HAMZA, message_type: 'message', posted_at: '2016-03-17T10:38:22.000Z', reply_count: 0 },
      });
      // a bot's message with no text of its own is its attachments' text; Slack markup becomes plain text
      const commit = upserts(enrique).find((d) => d.id === '1454894111.000006')!;
      expect(commit.title).toBe('[enrique:master] 1 new commit by hfaran:');
      expect(commit.content).toEqual({ kind: 'text', text: 'bot B0JL6RASU at 2016-02-08T01:15:11.000Z:\n[enrique:master] 1 new commit by hfaran:\nb16bfd8 (https://github.com/mesos-magellan/enrique/commit/b16bfd81399c6d6accd6ac1d70ecf5019635a873): Momentarily adding TSPSA specifics - hfaran' });
      expect(commit.filterableFields).toMatchObject({ author: 'B0JL6RASU', message_type: 'bot_message' });
      const edited = upserts(sailor).find((d) => d.id === '1458972985.000010')!;
      expect(edited.metadata).toMatchObject({ edited_ts: expect.any(String) });
    });

    it('lists every top-level message with the hash a sync gives it, one request per 999 messages', async () => {
      const synced = held(await sync(channel(ENRIQUE)));
      const before = fake.switches.requests.length;
      const listed = await listing(channel(ENRIQUE));
      expect(new Map(listed.map((d) => [d.id, d.contentHash]))).toEqual(synced);
      expect(calls(fake, before)).toEqual(['conversations.history']);
      const small = slackProviderFor(server, { listPageSize: 40 });
      const from = fake.switches.requests.length;
      expect(await drain(small.listExistingIds(ctx(), channel(ENRIQUE)))).toHaveLength(102);
      expect(calls(fake, from)).toEqual(['conversations.history', 'conversations.history', 'conversations.history']);
    });

    it('an unchanged channel: its capture, listing and sync take three calls, and every document comes back with its hash', async () => {
      const first = await sync(channel(ENRIQUE));
      const hashes = held(first);
      const before = fake.switches.requests.length;
      await provider.capturePermissions(ctx(), channel(ENRIQUE));
      const { gone, changed } = await reconcile(hashes, provider.listExistingIds(ctx(), channel(ENRIQUE)));
      const again = await sync(channel(ENRIQUE), lastCursor(first));
      expect(calls(fake, before)).toEqual(['conversations.info', 'conversations.history', 'conversations.history']);
      expect([gone, changed]).toEqual([[], []]);
      // the look-back window (7 days before the newest message) is read again; nothing in it changed
      const windowTs = topLevel(fake, ENRIQUE).filter((m) => Number(m.ts!.split('.')[0]) > 1459233874 - 7 * 86_400).map((m) => m.ts);
      expect(upserts(again).map((d) => d.id)).toEqual(windowTs);
      expect(windowTs).toHaveLength(47);
      for (const d of upserts(again)) expect(d.contentHash).toBe(hashes.get(d.id));
      expect(JSON.parse(lastCursor(again))).toEqual({ v: 1, channel: ENRIQUE, newest: '1459233874.000036', crawl: null });
    });
  });

  describe('incremental syncs', () => {
    it('reads from the newest message seen minus the look-back window: new messages and recent edits', async () => {
      const first = await sync(channel(ENRIQUE, { look_back_days: 1 }));
      fake.postMessage(ENRIQUE, { ts: '1459300000.000001', user: HARRY, text: 'A new message after the cursor' });
      fake.editMessage(ENRIQUE, '1459233874.000036', 'The last commit message, edited', { user: HAMZA, ts: '1459300001.000000' });
      const before = fake.switches.requests.length;
      const next = await sync(channel(ENRIQUE, { look_back_days: 1 }), lastCursor(first));
      const inWindow = topLevel(fake, ENRIQUE).filter((m) => Number(m.ts!.split('.')[0]) > 1459233874 - 86_400);
      expect(upserts(next).map((d) => d.id)).toEqual(inWindow.map((m) => m.ts));
      const changed = upserts(next).filter((d) => held(first).get(d.id) !== d.contentHash);
      expect(changed.map((d) => [d.id, d.title])).toEqual([
        ['1459300000.000001', 'A new message after the cursor'],
        ['1459233874.000036', 'The last commit message, edited'],
      ]);
      expect(calls(fake, before)).toEqual(['conversations.history']);
      expect(JSON.parse(lastCursor(next)).newest).toBe('1459300000.000001');
    });

    it('an older edit, a late reply to an old message, a back-dated message and a deletion: found by the listing, read with fetchDocuments', async () => {
      const first = await sync(channel(ENRIQUE));
      const hashes = held(first);
      fake.editMessage(ENRIQUE, '1458211102.000009', 'SA is fine after all', { user: HAMZA, ts: '1459300000.000000' });
      fake.reply(ENRIQUE, '1458251546.000002', { ts: '1459300001.000001', user: HERMIONE, text: 'A late reply: we really do GA' });
      fake.postMessage(ENRIQUE, { ts: '1455000000.000001', user: HARRY, text: 'Imported with its original, older timestamp' });
      fake.deleteMessage(ENRIQUE, '1452837359.000007');

      const next = await sync(channel(ENRIQUE), lastCursor(first));
      // none of these is in the look-back window of the newest message (2016-03-29)
      expect(upserts(next).some((d) => ['1458211102.000009', '1458251546.000002', '1455000000.000001'].includes(d.id))).toBe(false);

      const before = fake.switches.requests.length;
      const { gone, changed } = await reconcile(hashes, provider.listExistingIds(ctx(), channel(ENRIQUE)));
      expect(gone).toEqual(['1452837359.000007']);
      expect([...changed].sort()).toEqual(['1455000000.000001', '1458211102.000009', '1458251546.000002']);
      const fetched = await fetch(channel(ENRIQUE), [...changed, '1452837359.000007']);
      expect(calls(fake, before)).toEqual(['conversations.history', 'conversations.replies', 'conversations.replies', 'conversations.replies', 'conversations.replies']);
      const docs = new Map(upserts(fetched).map((d) => [d.id, d]));
      expect(docs.get('1458211102.000009')!.content).toEqual({ kind: 'text', text: '@U0BMQB6JE at 2016-03-17T10:38:22.000Z (edited):\nSA is fine after all' });
      expect(docs.get('1458251546.000002')!.content).toEqual({
        kind: 'text',
        text: '@U0BMQB6JE at 2016-03-17T21:52:26.000Z:\nWe do GA\n\nThread (1 reply):\n@U0BMS113R at 2016-03-30T01:06:41.000Z:\nA late reply: we really do GA',
      });
      expect(docs.get('1458251546.000002')!.filterableFields.reply_count).toBe(1);
      expect(docs.get('1455000000.000001')!.title).toBe('Imported with its original, older timestamp');
      expect(fetched.filter((e) => e.kind === 'delete')).toEqual([{ kind: 'delete', id: '1452837359.000007' }]);
      // what fetchDocuments read hashes as the listing does: the next comparison finds nothing
      for (const d of upserts(fetched)) hashes.set(d.id, d.contentHash);
      hashes.delete('1452837359.000007');
      expect(await reconcile(hashes, provider.listExistingIds(ctx(), channel(ENRIQUE)))).toEqual({ gone: [], changed: [] });
    });

    it('folds a thread into its message: replies in order, a broadcast reply not a document of its own, a reply edit seen in the window', async () => {
      const first = await sync(channel(SAILOR));
      const parent = '1459254786.000027';
      fake.reply(SAILOR, parent, { ts: '1459260000.000001', user: HARRY, text: 'Which build is this?' });
      fake.reply(SAILOR, parent, { ts: '1459260100.000002', user: HERMIONE, text: 'The one with <https://example.test/b/42|build 42> &amp; the fix', subtype: 'thread_broadcast' });
      const before = fake.switches.requests.length;
      const second = await sync(channel(SAILOR), lastCursor(first));
      expect(calls(fake, before)).toEqual(['conversations.history', 'conversations.replies']);
      const thread = upserts(second).find((d) => d.id === parent)!;
      expect(thread.content.kind === 'text' && thread.content.text.split('\n').slice(-5)).toEqual([
        'Thread (2 replies):',
        '@U0BMYT2FL at 2016-03-29T14:00:00.000Z:',
        'Which build is this?',
        '@U0BMS113R at 2016-03-29T14:01:40.000Z:',
        'The one with build 42 (https://example.test/b/42) & the fix',
      ]);
      expect(upserts(second).map((d) => d.id)).not.toContain('1459260100.000002');
      expect(thread.metadata.last_activity_at).toBe('2016-03-29T14:01:40.000Z');

      fake.editMessage(SAILOR, '1459260000.000001', 'Which build is this? The nightly?', { user: HARRY, ts: '1459260500.000000' });
      const third = await sync(channel(SAILOR), lastCursor(second));
      const edited = upserts(third).find((d) => d.id === parent)!;
      // Slack shows a reply's edit nowhere on the parent, so the hash stays; the document's last activity moves
      expect(edited.contentHash).toBe(thread.contentHash);
      expect(edited.metadata.last_activity_at).toBe('2016-03-29T14:08:20.000Z');
      expect(edited.content.kind === 'text' && edited.content.text).toContain('Which build is this? The nightly?');
    });

    it('pages resume from any checkpoint with no gap and no repeat', async () => {
      const resource = channel(ENRIQUE, { page_size: 7 });
      const full = await sync(resource);
      const cursors = checkpoints(full);
      expect(cursors).toHaveLength(15);
      // stop after the third page, then resume from its checkpoint
      const head = full.slice(0, full.indexOf(full.filter((e) => e.kind === 'checkpoint')[2]) + 1);
      const rest = await sync(resource, cursors[2]);
      expect([...upserts(head), ...upserts(rest)].map((d) => d.id)).toEqual(upserts(full).map((d) => d.id));
      expect(upserts(head)).toHaveLength(21);
    });

    it('an edit during a crawl: a page not yet read shows it; one already read is picked up by the next sync', async () => {
      const resource = channel(ENRIQUE, { page_size: 20 });
      // after the first page: edit a message on the last page, and one on the first
      fake.switches.afterRequests(1, () => {
        fake.editMessage(ENRIQUE, '1452837352.000006', 'Edited while the crawl was on page one', { user: HAMZA, ts: '1459400000.000000' });
        fake.editMessage(ENRIQUE, '1459233874.000036', 'Edited after its page was read', { user: HAMZA, ts: '1459400001.000000' });
      });
      const first = await sync(resource);
      const byId = new Map(upserts(first).map((d) => [d.id, d]));
      expect(byId.get('1452837352.000006')!.title).toBe('Edited while the crawl was on page one');
      expect(byId.get('1459233874.000036')!.title).not.toBe('Edited after its page was read');
      const next = await sync(resource, lastCursor(first));
      expect(upserts(next).find((d) => d.id === '1459233874.000036')!.title).toBe('Edited after its page was read');
    });

    it('a message posted during a crawl is left for the next sync, which reads it', async () => {
      const resource = channel(SAILOR, { page_size: 20 });
      fake.switches.afterRequests(1, () => fake.postMessage(SAILOR, { ts: '1459500000.000001', user: HARRY, text: 'Posted mid-crawl' }));
      const first = await sync(resource);
      expect(upserts(first)).toHaveLength(56);
      const next = await sync(resource, lastCursor(first));
      expect(upserts(next)[0]).toMatchObject({ id: '1459500000.000001', title: 'Posted mid-crawl' });
    });

    it('a cursor of another channel, or one it cannot read, starts from the beginning', async () => {
      const sailorCursor = lastCursor(await sync(channel(SAILOR)));
      expect(upserts(await sync(channel(ENRIQUE), sailorCursor))).toHaveLength(102);
      expect(upserts(await sync(channel(ENRIQUE), 'not json'))).toHaveLength(102);
    });

    it('refuses options out of range, naming them', async () => {
      await expect(sync(channel(ENRIQUE, { look_back_days: 'seven' }))).rejects.toThrow('Option look_back_days of channel C0JGLMMNX must be a whole number from 0 to 90; it is "seven".');
      await expect(sync(channel(ENRIQUE, { page_size: 5000 }))).rejects.toThrow(ConfigurationError);
      await expect(sync(channel(ENRIQUE, { pagesize: 5 }))).rejects.toThrow('Channel C0JGLMMNX has unknown options pagesize; the known ones are look_back_days, page_size.');
    });
  });

  describe('when Slack says no', () => {
    it('a 429 ends the sync at once with the time Slack asked to wait until, after the pages already yielded', async () => {
      const events: SyncEvent[] = [];
      fake.switches.afterRequests(1, () => fake.switches.rateLimitNext(1, 600));
      const started = Date.now();
      const error = await (async () => {
        for await (const e of provider.sync(ctx(), channel(ENRIQUE, { page_size: 20 }), null)) events.push(e);
      })().catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(error).toBeInstanceOf(RateLimitedError);
      expect((error as RateLimitedError).retryAt.toISOString()).toBe('2031-05-01T12:10:00.000Z');
      expect((error as RateLimitedError).message).toBe('Slack rate-limited the app reading channel C0JGLMMNX; it asked to wait 600 s.');
      expect(checkpoints(events)).toHaveLength(1);
      expect(upserts(events)).toHaveLength(20);
    });

    it('a short burst of 5xx is retried by the client; a longer one is a transient error', async () => {
      fake.switches.failNext(2, 503);
      expect(upserts(await sync(channel(SAILOR)))).toHaveLength(56);
      expect(calls(fake)).toEqual(['conversations.history', 'conversations.history', 'conversations.history']);
      fake.switches.failNext(3, 502);
      const error = await sync(channel(SAILOR)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      expect((error as Error).message).toBe('Slack answered HTTP 502 reading channel C0JL6CGQ2, also after retrying. The sync is tried again later.');
    });

    it('a token revoked mid-sync (HTTP 200, ok: false, token_revoked) is an AuthError after the pages already read', async () => {
      const events: SyncEvent[] = [];
      fake.switches.afterRequests(2, () => fake.switches.revokeToken(fake.token));
      const error = await (async () => {
        for await (const e of provider.sync(ctx(), channel(ENRIQUE, { page_size: 20 }), null)) events.push(e);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthError);
      expect((error as Error).message).toBe(
        'Slack refused the bot token reading channel C0JGLMMNX (token_revoked: the token was revoked (the app was uninstalled or its token rotated)). Reinstall the app if needed and set its bot token (xoxb-…) on the connector.',
      );
      expect(checkpoints(events)).toHaveLength(2);
    });

    it('a channel the app is not in is a scope error; one that is gone is a resource that is gone', async () => {
      fake.setAppMember(SAILOR, false);
      const refused = sync(channel(SAILOR));
      await expect(refused).rejects.toBeInstanceOf(ScopeError);
      await expect(refused).rejects.toThrow('The app is not a member of channel C0JL6CGQ2; invite it (/invite @app-name in the channel) to sync it.');
      await expect(sync(channel('C0NOSUCH01'))).rejects.toBeInstanceOf(ResourceGoneError);
      await expect(provider.capturePermissions(ctx(), channel('C0NOSUCH01'))).rejects.toBeInstanceOf(ResourceGoneError);
    });

    it('an API URL on this machine is refused before any request unless private networks are allowed', async () => {
      const guarded = new SlackProvider({ apiUrl: `${server.url}/api/` });
      await expect(guarded.validateCredentials(ctx())).rejects.toBeInstanceOf(TargetForbiddenError);
      await expect(drain(guarded.sync(ctx(), channel(ENRIQUE), null))).rejects.toThrow(/127\.0\.0\.1.*not on the public internet/);
      expect(fake.switches.requests).toEqual([]);
    });
  });

  describe('permission capture', () => {
    it('a public channel is readable by the workspace: one call, the workspace group', async () => {
      await expect(provider.capturePermissions(ctx(), channel(ENRIQUE))).resolves.toEqual({ status: 'captured', acl: [WORKSPACE_GROUP] });
      expect(calls(fake)).toEqual(['conversations.info']);
    });

    it('a private channel is readable by its members, by email; bots and deactivated people are no one', async () => {
      fake.addUser({ id: 'U0GONE0001', name: 'left', deleted: true, profile: { email: 'left@example.test' } });
      fake.addChannel({ id: 'G0OPEN0001', name: 'leads', is_private: true }, [HERMIONE, HARRY, BOT_USER, 'U0GONE0001']);
      await expect(provider.channelAccess(ctx(), channel('G0OPEN0001'))).resolves.toEqual({
        permission: { status: 'captured', acl: ['user_email:harry@example.test', 'user_email:hermione@example.test'] },
        basis: 'members',
        members: 4,
        unresolved: 0,
      });
      expect(calls(fake)).toEqual(['conversations.info', 'conversations.members', 'users.info', 'users.info', 'users.info', 'users.info']);
    });

    it('a member with a hidden email leaves the verdict to the resource rule, and is counted', async () => {
      fake.addChannel({ id: 'G0CORE0001', name: 'core-team', is_private: true }, [HAMZA, HANNIBAL, HARRY, BOT_USER]);
      await expect(provider.channelAccess(ctx(), channel('G0CORE0001'))).resolves.toEqual({ permission: { status: 'captured', acl: null, unresolved: 2 }, basis: 'unresolved_members', members: 4, unresolved: 2 });
    });

    it('members are looked up in users.list pages when there are many, stopping once all are found', async () => {
      const people = Array.from({ length: 30 }, (_, i) => `U1${String(i).padStart(8, '0')}`);
      for (const [i, id] of people.entries()) fake.addUser({ id, name: `p${i}`, profile: { email: `p${i}@example.test` } });
      fake.addUser({ id: 'U2NOTMEMBER', name: 'outsider', profile: { email: 'outsider@example.test' } });
      fake.addChannel({ id: 'G0MANY0001', name: 'many', is_private: true }, people.slice(0, 25));
      fake.switches.maxPageSize = 10;
      const { permission } = await provider.channelAccess(ctx(), channel('G0MANY0001'));
      expect(permission).toEqual({ status: 'captured', acl: people.slice(0, 25).map((_, i) => `user_email:p${i}@example.test`).sort() });
      // users sorted by id: the export's four, then the 30 people, in pages of 10; the 25 members are all on the first three
      expect(calls(fake)).toEqual(['conversations.info', 'conversations.members', 'conversations.members', 'conversations.members', 'users.list', 'users.list', 'users.list']);
    });

    it('more than 1,000 members is the channel as a group, not a truncated list, without listing them', async () => {
      const crowd = Array.from({ length: 1001 }, (_, i) => `U3${String(i).padStart(8, '0')}`);
      fake.addChannel({ id: 'G0CROWD001', name: 'all-hands', is_private: true }, crowd);
      await expect(provider.capturePermissions(ctx(), channel('G0CROWD001'))).resolves.toEqual({ status: 'captured', acl: ['group:slack:g0crowd001'] });
      expect(calls(fake)).toEqual(['conversations.info']);
    });

    it('a channel made private, and members removed, show on the next capture', async () => {
      fake.setPrivate(SAILOR, true);
      await expect(provider.capturePermissions(ctx(), channel(SAILOR))).resolves.toEqual({ status: 'captured', acl: null, unresolved: 2 });
      fake.removeMember(SAILOR, HAMZA);
      fake.removeMember(SAILOR, HANNIBAL);
      await expect(provider.capturePermissions(ctx(), channel(SAILOR))).resolves.toEqual({ status: 'captured', acl: ['user_email:harry@example.test', 'user_email:hermione@example.test'] });
      fake.removeMember(SAILOR, HERMIONE);
      await expect(provider.capturePermissions(ctx(), channel(SAILOR))).resolves.toEqual({ status: 'captured', acl: ['user_email:harry@example.test'] });
    });
  });
});
