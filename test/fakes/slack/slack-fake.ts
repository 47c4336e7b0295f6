import { readFile } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import JSZip from 'jszip';
import type {
  AuthTestResponse,
  ConversationsHistoryResponse,
  ConversationsInfoResponse,
  ConversationsListResponse,
  ConversationsMembersResponse,
  ConversationsRepliesResponse,
  UsersInfoResponse,
  UsersListResponse,
} from '@slack/web-api';
import { createFakeApp, listenOnLoopback, type RunningFake } from '../loopback-server';
import { ScenarioSwitches, type Interruption } from '../scenario-switches';

export type SlackChannel = NonNullable<ConversationsListResponse['channels']>[number];
export type SlackMessage = NonNullable<ConversationsHistoryResponse['messages']>[number];
export type SlackUser = NonNullable<UsersListResponse['members']>[number];

/** One channel of the fake workspace: its description, its members and its messages (top level and replies). */
interface ChannelState {
  channel: SlackChannel;
  members: string[];
  messages: SlackMessage[];
  /** whether the app (the token's bot) is in the channel: it reads only those, and sees private ones only then */
  appIsMember: boolean;
}

/** The bot token scopes a channel connector asks for; Slack lists a token's scopes in every answer's X-OAuth-Scopes. */
export const CHANNEL_READER_SCOPES = ['channels:read', 'channels:history', 'groups:read', 'groups:history', 'users:read', 'users:read.email'];

/** Slack ts values are `seconds.micro` strings of fixed width after the dot; compared as numbers they sort in time. */
const tsValue = (ts: string | undefined): number => Number(ts ?? '0');

/** Opaque cursors as Slack makes them: base64 of a position anchor (`next_ts:` for history, `id:` for lists). */
const encodeCursor = (anchor: string): string => Buffer.from(anchor).toString('base64');
const decodeCursor = (cursor: string | undefined, prefix: string): string | undefined => {
  if (!cursor) return undefined;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  if (!text.startsWith(prefix)) throw new SlackMethodError('invalid_cursor');
  return text.slice(prefix.length);
};

class SlackMethodError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** A page of items sorted by an anchor key: items from the anchor on, and the anchor of the next page if any. */
function pageFrom<T>(sorted: T[], keyOf: (item: T) => string, anchor: string | undefined, size: number) {
  const start = anchor === undefined ? 0 : sorted.findIndex((item) => keyOf(item) === anchor);
  const from = start < 0 ? sorted.length : start;
  const items = sorted.slice(from, from + size);
  const next = sorted[from + size];
  return { items, nextAnchor: next === undefined ? undefined : keyOf(next) };
}

/**
 * A fake of the Slack Web API (the methods a channel connector calls), holding one workspace in memory.
 * Methods are POSTs to `/api/<method>` with form or JSON bodies and a bearer token, answered with HTTP 200 and
 * `ok: false` plus an error code for every failure except throttling (HTTP 429 with Retry-After), as Slack does.
 */
export class SlackFake {
  readonly switches: ScenarioSwitches;
  readonly team = { id: 'T0BMHLSRH', name: 'fake-workspace' };
  private readonly channels = new Map<string, ChannelState>();
  private readonly users = new Map<string, SlackUser>();
  private running: RunningFake | undefined;
  /** the token's scopes, sent in X-OAuth-Scopes */
  scopes: string[] = [...CHANNEL_READER_SCOPES];

  constructor(readonly token = 'xoxb-fake-token') {
    this.switches = new ScenarioSwitches(new Set([token]));
  }

  /**
   * Loads a Slack workspace export (channels.json, users.json, one folder per channel with a JSON file per day).
   * Exports carry no email addresses, so `emails` supplies those the workspace would reveal with `users:read.email`;
   * users left out have none, as when Slack hides them.
   */
  async loadExport(zipPath: string, emails: Record<string, string> = {}): Promise<void> {
    const zip = await JSZip.loadAsync(await readFile(zipPath));
    const readJson = async <T>(name: string): Promise<T> => {
      const file = zip.file(name);
      if (file === null) throw new Error(`export has no ${name}`);
      return JSON.parse(await file.async('string')) as T;
    };
    type ExportChannel = { id: string; name: string; created: string; creator: string; is_archived: boolean; is_general: boolean; members: string[]; topic: { value: string; creator: string; last_set: string }; purpose: { value: string; creator: string; last_set: string } };
    for (const user of await readJson<SlackUser[]>('users.json')) {
      const email = user.id === undefined ? undefined : emails[user.id];
      this.users.set(user.id!, { ...user, profile: { ...user.profile, email } });
    }
    for (const c of await readJson<ExportChannel[]>('channels.json')) {
      const messages: SlackMessage[] = [];
      for (const name of Object.keys(zip.files).filter((n) => n.startsWith(`${c.name}/`) && n.endsWith('.json'))) {
        messages.push(...(await readJson<SlackMessage[]>(name)));
      }
      this.addChannel(
        {
          id: c.id,
          name: c.name,
          created: Number(c.created),
          creator: c.creator,
          is_archived: c.is_archived,
          is_general: c.is_general,
          is_private: false,
          topic: { value: c.topic.value, creator: c.topic.creator, last_set: Number(c.topic.last_set) },
          purpose: { value: c.purpose.value, creator: c.purpose.creator, last_set: Number(c.purpose.last_set) },
        },
        c.members,
        messages,
      );
    }
  }

  addUser(user: SlackUser): void {
    this.users.set(user.id!, user);
  }

  addChannel(channel: SlackChannel, members: string[], messages: SlackMessage[] = []): void {
    const sorted = [...messages].sort((a, b) => tsValue(a.ts) - tsValue(b.ts));
    this.channels.set(channel.id!, { channel: { is_channel: true, ...channel }, members: [...members], messages: sorted, appIsMember: true });
  }

  /** Invites the app to a channel or removes it: history needs it, and a private channel is invisible without it. */
  setAppMember(channelId: string, isMember: boolean): void {
    this.state(channelId).appIsMember = isMember;
  }

  /** All messages of a channel, replies included, oldest first: what a test compares a sync against. */
  messagesOf(channelId: string): SlackMessage[] {
    return [...this.state(channelId).messages];
  }

  /** Posts a message with any ts, a back-dated one included (imports and delayed deliveries keep their original ts). */
  postMessage(channelId: string, message: SlackMessage): void {
    const state = this.state(channelId);
    state.messages.push({ type: 'message', ...message });
    state.messages.sort((a, b) => tsValue(a.ts) - tsValue(b.ts));
  }

  /** A thread reply: the parent keeps its ts, and only its reply_count and latest_reply move. */
  reply(channelId: string, parentTs: string, message: SlackMessage): void {
    const parent = this.message(channelId, parentTs);
    parent.thread_ts = parentTs;
    parent.reply_count = (parent.reply_count ?? 0) + 1;
    parent.latest_reply = message.ts;
    parent.reply_users = [...new Set([...(parent.reply_users ?? []), message.user!])];
    this.postMessage(channelId, { ...message, thread_ts: parentTs });
  }

  /** An edit keeps the message's ts and records the edit's own ts, so only a look-back window finds it. */
  editMessage(channelId: string, ts: string, text: string, edit: { user: string; ts: string }): void {
    const message = this.message(channelId, ts);
    message.text = text;
    message.edited = edit;
  }

  /** A deleted message is gone from history and replies, with nothing left in its place. */
  deleteMessage(channelId: string, ts: string): void {
    const state = this.state(channelId);
    state.messages = state.messages.filter((m) => m.ts !== ts);
  }

  addMember(channelId: string, userId: string): void {
    const state = this.state(channelId);
    if (!state.members.includes(userId)) state.members.push(userId);
  }

  removeMember(channelId: string, userId: string): void {
    const state = this.state(channelId);
    state.members = state.members.filter((m) => m !== userId);
  }

  /** Converting a channel between public and private changes who can read it and nothing else. */
  setPrivate(channelId: string, isPrivate: boolean): void {
    this.state(channelId).channel.is_private = isPrivate;
  }

  async start(): Promise<RunningFake> {
    const app = createFakeApp();
    app.addHook('onRequest', async (req, reply) => {
      const interruption = this.switches.intercept(this.tokenOf(req));
      if (interruption !== undefined) return this.interrupt(reply, interruption);
    });
    app.addHook('onSend', async (req, reply) => {
      reply.header('x-oauth-scopes', this.scopes.join(','));
      this.switches.answered(req.method, req.url);
    });
    app.post('/api/:method', async (req) => {
      const { method } = req.params as { method: string };
      const args = { ...(req.query as Record<string, string>), ...((req.body as Record<string, string>) ?? {}) };
      try {
        return this.call(method, args);
      } catch (error) {
        if (error instanceof SlackMethodError) return { ok: false, error: error.code };
        throw error;
      }
    });
    this.running = await listenOnLoopback(app);
    return this.running;
  }

  async stop(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }

  /** Slack takes the token from the Authorization header or, for older clients, from a `token` argument. */
  private tokenOf(req: FastifyRequest): string | undefined {
    const header = req.headers.authorization;
    if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length);
    const body = req.body as Record<string, string> | undefined;
    return body?.token ?? (req.query as Record<string, string>).token;
  }

  private interrupt(reply: FastifyReply, interruption: Interruption) {
    switch (interruption.kind) {
      case 'rate-limited':
        return reply.code(429).header('retry-after', String(interruption.retryAfterSeconds)).send({ ok: false, error: 'ratelimited' });
      case 'server-error':
        return reply.code(interruption.status).type('text/html').send('<html><body>Service Unavailable</body></html>');
      case 'unauthorized': {
        const error = { missing: 'not_authed', invalid: 'invalid_auth', revoked: 'token_revoked' }[interruption.reason];
        return reply.code(200).send({ ok: false, error });
      }
      default: {
        const unreachable: never = interruption;
        throw new Error(`unknown interruption ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private call(method: string, args: Record<string, string>) {
    switch (method) {
      case 'auth.test':
        return this.authTest();
      case 'conversations.list':
        return this.conversationsList(args);
      case 'conversations.info':
        return this.conversationsInfo(args);
      case 'conversations.history':
        return this.conversationsHistory(args);
      case 'conversations.replies':
        return this.conversationsReplies(args);
      case 'conversations.members':
        return this.conversationsMembers(args);
      case 'users.list':
        return this.usersList(args);
      case 'users.info':
        return this.usersInfo(args);
      default:
        throw new SlackMethodError('unknown_method');
    }
  }

  private authTest(): AuthTestResponse {
    return { ok: true, url: `https://${this.team.name}.slack.com/`, team: this.team.name, team_id: this.team.id, user: 'crs-bot', user_id: 'UCRSBOT01', bot_id: 'BCRSBOT01', is_enterprise_install: false };
  }

  /** Channels sorted by id, paged by an `id:` cursor; `types` filters public and private, as the method does. */
  private conversationsList(args: Record<string, string>): ConversationsListResponse {
    const types = (args.types ?? 'public_channel').split(',');
    const channels = [...this.channels.values()]
      .filter((c) => !c.channel.is_private || c.appIsMember)
      .filter(({ channel }) => (channel.is_private ? types.includes('private_channel') : types.includes('public_channel')))
      .filter(({ channel }) => !(args.exclude_archived === 'true' && channel.is_archived))
      .sort((a, b) => a.channel.id!.localeCompare(b.channel.id!));
    const page = pageFrom(channels, (c) => c.channel.id!, decodeCursor(args.cursor, 'id:'), this.switches.pageSize(Number(args.limit), 100, 1000));
    return {
      ok: true,
      channels: page.items.map((c) => this.describe(c)),
      response_metadata: { next_cursor: page.nextAnchor === undefined ? '' : encodeCursor(`id:${page.nextAnchor}`) },
    };
  }

  private conversationsInfo(args: Record<string, string>): ConversationsInfoResponse {
    return { ok: true, channel: this.describe(this.visible(args.channel)) };
  }

  /**
   * Top-level messages (thread replies only when broadcast) newest first, between `oldest` and `latest` (exclusive
   * unless `inclusive`), paged by a `next_ts:` cursor anchored on a message, so messages posted during a crawl land
   * above the anchor and never shift the pages still to come.
   */
  private conversationsHistory(args: Record<string, string>): ConversationsHistoryResponse {
    const state = this.readable(args.channel);
    const inclusive = args.inclusive === 'true' || args.inclusive === '1';
    const oldest = tsValue(args.oldest);
    const latest = args.latest === undefined ? Number.POSITIVE_INFINITY : tsValue(args.latest);
    const anchor = decodeCursor(args.cursor, 'next_ts:');
    const topLevel = state.messages
      .filter((m) => m.thread_ts === undefined || m.thread_ts === m.ts || m.subtype === 'thread_broadcast')
      .filter((m) => (inclusive ? tsValue(m.ts) >= oldest && tsValue(m.ts) <= latest : tsValue(m.ts) > oldest && tsValue(m.ts) < latest))
      .filter((m) => anchor === undefined || tsValue(m.ts) <= tsValue(anchor))
      .reverse();
    const page = pageFrom(topLevel, (m) => m.ts!, undefined, this.switches.pageSize(Number(args.limit), 100, 999));
    return {
      ok: true,
      messages: page.items.map((m) => ({ ...m })),
      has_more: page.nextAnchor !== undefined,
      pin_count: 0,
      ...(page.nextAnchor === undefined ? {} : { response_metadata: { next_cursor: encodeCursor(`next_ts:${page.nextAnchor}`) } }),
    };
  }

  /** A thread oldest first, the parent message first, paged by a `next_ts:` cursor; `oldest` narrows the replies. */
  private conversationsReplies(args: Record<string, string>): ConversationsRepliesResponse {
    const state = this.readable(args.channel);
    const parent = state.messages.find((m) => m.ts === args.ts);
    if (parent === undefined) throw new SlackMethodError('thread_not_found');
    const oldest = tsValue(args.oldest);
    const anchor = decodeCursor(args.cursor, 'next_ts:');
    const thread = state.messages
      .filter((m) => m.ts === parent.ts || (m.thread_ts === parent.ts && tsValue(m.ts) > oldest))
      .filter((m) => anchor === undefined || tsValue(m.ts) >= tsValue(anchor));
    const page = pageFrom(thread, (m) => m.ts!, undefined, this.switches.pageSize(Number(args.limit), 100, 1000));
    return {
      ok: true,
      messages: page.items.map((m) => ({ ...m })),
      has_more: page.nextAnchor !== undefined,
      ...(page.nextAnchor === undefined ? {} : { response_metadata: { next_cursor: encodeCursor(`next_ts:${page.nextAnchor}`) } }),
    };
  }

  private conversationsMembers(args: Record<string, string>): ConversationsMembersResponse {
    const members = [...this.visible(args.channel).members].sort();
    const page = pageFrom(members, (m) => m, decodeCursor(args.cursor, 'id:'), this.switches.pageSize(Number(args.limit), 100, 1000));
    return { ok: true, members: page.items, response_metadata: { next_cursor: page.nextAnchor === undefined ? '' : encodeCursor(`id:${page.nextAnchor}`) } };
  }

  private usersList(args: Record<string, string>): UsersListResponse {
    const users = [...this.users.values()].sort((a, b) => a.id!.localeCompare(b.id!));
    const page = pageFrom(users, (u) => u.id!, decodeCursor(args.cursor, 'id:'), this.switches.pageSize(Number(args.limit), 100, 1000));
    return {
      ok: true,
      members: page.items,
      cache_ts: Math.floor(Date.now() / 1000),
      response_metadata: { next_cursor: page.nextAnchor === undefined ? '' : encodeCursor(`id:${page.nextAnchor}`) },
    };
  }

  private usersInfo(args: Record<string, string>): UsersInfoResponse {
    const user = this.users.get(args.user);
    if (user === undefined) throw new SlackMethodError('user_not_found');
    return { ok: true, user };
  }

  /** As conversations.info and .list describe a channel: with the workspace it belongs to and its member count. */
  private describe(state: ChannelState): SlackChannel {
    return { ...state.channel, context_team_id: this.team.id, num_members: state.members.length, is_member: state.appIsMember };
  }

  /** A channel the app can see: every public one, and the private ones it is in (others do not exist for it). */
  private visible(channelId: string | undefined): ChannelState {
    const state = this.state(channelId);
    if (state.channel.is_private && !state.appIsMember) throw new SlackMethodError('channel_not_found');
    return state;
  }

  /** A channel whose messages the app may read: one it is a member of. */
  private readable(channelId: string | undefined): ChannelState {
    const state = this.visible(channelId);
    if (!state.appIsMember) throw new SlackMethodError('not_in_channel');
    return state;
  }

  private state(channelId: string | undefined): ChannelState {
    const state = channelId === undefined ? undefined : this.channels.get(channelId);
    if (state === undefined) throw new SlackMethodError('channel_not_found');
    return state;
  }

  private message(channelId: string, ts: string): SlackMessage {
    const message = this.state(channelId).messages.find((m) => m.ts === ts);
    if (message === undefined) throw new Error(`no message ${ts} in ${channelId}`);
    return message;
  }
}
