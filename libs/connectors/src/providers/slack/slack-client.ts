import {
  LogLevel,
  WebClient,
  type AuthTestResponse,
  type ConversationsHistoryResponse,
  type ConversationsInfoResponse,
  type ConversationsListResponse,
  type Logger,
  type RetryOptions,
  type UsersInfoResponse,
  type UsersListResponse,
} from '@slack/web-api';
import { ConfigurationError } from '../../provider-errors';
import type { ProviderContext } from '../../provider.port';
import { slackErrorCode, toProviderError } from './slack-errors';
import type { SlackMessage } from './slack-mapping';

export type SlackChannel = NonNullable<ConversationsInfoResponse['channel']>;
export type SlackListedChannel = NonNullable<ConversationsListResponse['channels']>[number];
export type SlackUser = NonNullable<UsersInfoResponse['user']>;
export type SlackListedUser = NonNullable<UsersListResponse['members']>[number];

export interface SlackClientSettings {
  /** The Web API's base URL, ending in `/` (https://slack.com/api/ unless an operator points it elsewhere). */
  apiUrl: string;
  /** HTTP 5xx and network failures: the client's own retries, kept short so a sync never sleeps for long. */
  retryConfig: RetryOptions;
  /** Each request's time limit (ms). */
  timeoutMs: number;
  /** `now` for a Retry-After's end. */
  clock: () => Date;
}

/** The client logs nothing: every failure comes back as a ProviderError, and its debug output names request bodies. */
const SILENT: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

/** The bot token from the connector's credentials; a missing or malformed one is refused before any call. */
export function botToken(ctx: ProviderContext): string {
  const token = ctx.credentials.bot_token;
  if (typeof token !== 'string' || token.trim() === '') throw new ConfigurationError('The credentials need bot_token: the app\'s Bot User OAuth Token (xoxb-…).');
  if (!/^xox[a-z]-/.test(token.trim())) throw new ConfigurationError('bot_token is not a Slack token: a Bot User OAuth Token starts with xoxb- (OAuth & Permissions in the app\'s settings).');
  return token.trim();
}

/**
 * The Web API methods the provider calls, each answered with the client's own response types and failing with a
 * ProviderError (slack-errors.ts). Built per call from the connector's credentials: the provider keeps no state.
 * `rejectRateLimitedCalls` makes a 429 throw at once with its Retry-After, which the sync engine turns into a deferral
 * instead of a sleep that would hold the resource's lease.
 */
export class SlackApi {
  private readonly web: WebClient;

  constructor(
    token: string,
    private readonly ctx: ProviderContext,
    private readonly settings: SlackClientSettings,
    /** the channel named in error messages */
    private readonly channel?: string,
  ) {
    this.web = new WebClient(token, {
      slackApiUrl: settings.apiUrl,
      rejectRateLimitedCalls: true,
      retryConfig: settings.retryConfig,
      timeout: settings.timeoutMs,
      logger: SILENT,
      allowAbsoluteUrls: false,
    });
  }

  /**
   * Runs one call, after checking the sync was not stopped, and maps its failure; `expected` lists Slack error codes
   * that are an answer rather than a failure, for which `otherwise` is returned.
   */
  private async call<T>(run: (web: WebClient) => Promise<T>, expected: { codes: readonly string[]; otherwise: T } = { codes: [], otherwise: undefined as T }): Promise<T> {
    this.ctx.signal?.throwIfAborted();
    try {
      return await run(this.web);
    } catch (err) {
      const code = slackErrorCode(err);
      if (code !== undefined && expected.codes.includes(code)) return expected.otherwise;
      throw toProviderError(err, this.settings.clock(), this.channel);
    }
  }

  authTest(): Promise<AuthTestResponse> {
    return this.call((web) => web.auth.test());
  }

  channelInfo(channel: string): Promise<SlackChannel> {
    return this.call(async (web) => (await web.conversations.info({ channel, include_num_members: true })).channel ?? {});
  }

  /** Every public channel, and every private one the app is in, archived ones included. */
  async channels(): Promise<SlackListedChannel[]> {
    const out: SlackListedChannel[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.call((web) => web.conversations.list({ types: 'public_channel,private_channel', limit: 1000, ...(cursor ? { cursor } : {}) }));
      out.push(...(page.channels ?? []));
      cursor = page.response_metadata?.next_cursor || undefined;
    } while (cursor);
    return out;
  }

  /**
   * One page of a channel's history, newest first, strictly between `oldest` and `latest` (either null: unbounded):
   * keyset paging by message ts, so a page does not depend on a Slack cursor kept between syncs.
   */
  async history(channel: string, oldest: string | null, latest: string | null, limit: number): Promise<{ messages: SlackMessage[]; hasMore: boolean }> {
    const page: ConversationsHistoryResponse = await this.call((web) =>
      web.conversations.history({ channel, limit, inclusive: false, ...(oldest ? { oldest } : {}), ...(latest ? { latest } : {}) }),
    );
    return { messages: page.messages ?? [], hasMore: page.has_more === true };
  }

  /**
   * A message and its thread's replies, oldest first (the message first), every page. A message without replies comes
   * back alone; one that no longer exists (`thread_not_found`) gives an empty list.
   */
  async thread(channel: string, ts: string): Promise<SlackMessage[]> {
    const out: SlackMessage[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.call((web) => web.conversations.replies({ channel, ts, limit: 1000, ...(cursor ? { cursor } : {}) }), { codes: ['thread_not_found'], otherwise: { ok: true, messages: [] } });
      out.push(...(page.messages ?? []));
      cursor = page.has_more ? page.response_metadata?.next_cursor || undefined : undefined;
    } while (cursor);
    return out;
  }

  /** The ids of a channel's members, every page. */
  async members(channel: string): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.call((web) => web.conversations.members({ channel, limit: 1000, ...(cursor ? { cursor } : {}) }));
      out.push(...(page.members ?? []));
      cursor = page.response_metadata?.next_cursor || undefined;
    } while (cursor);
    return out;
  }

  /** One user; undefined when Slack no longer knows the id. */
  user(id: string): Promise<SlackUser | undefined> {
    return this.call(async (web) => (await web.users.info({ user: id })).user, { codes: ['user_not_found', 'user_not_visible'], otherwise: undefined });
  }

  /** The workspace's users, page by page, so a caller may stop once it has found whom it looks for. */
  async *users(): AsyncIterable<SlackListedUser[]> {
    let cursor: string | undefined;
    do {
      const page = await this.call((web) => web.users.list({ limit: 1000, ...(cursor ? { cursor } : {}) }));
      yield page.members ?? [];
      cursor = page.response_metadata?.next_cursor || undefined;
    } while (cursor);
  }
}
