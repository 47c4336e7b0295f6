import type { RetryOptions } from '@slack/web-api';
import { privateTargetReason } from '@crs/network/public-targets';
import { DocumentError, TargetForbiddenError } from '../../provider-errors';
import type {
  AccountIdentity,
  ConnectorProvider,
  DiscoveredResource,
  ExistingDocument,
  ProviderContext,
  ProviderDescription,
  ResourceConfig,
  ResourcePermission,
  SyncCursor,
  SyncedDocument,
  SyncEvent,
} from '../../provider.port';
import { botToken, SlackApi, type SlackClientSettings, type SlackListedUser } from './slack-client';
import { decodeCursor, encodeCursor, type ChannelPosition } from './slack-cursor';
import { hasThread, isTopLevel, messageDocument, messageHash, SLACK_FILTERABLE_FIELDS, type SlackMessage } from './slack-mapping';
import { channelOptions, SLACK_RESOURCE_OPTIONS } from './slack-options';
import { channelAccess, type ChannelAccess } from './slack-permissions';
import { isTs, newerTs, tsMinusSeconds, tsToIso } from './slack-ts';

export interface SlackProviderOptions {
  /**
   * Whether the Web API URL may be a loopback, private or reserved address (CONNECTOR_ALLOW_PRIVATE_NETWORKS;
   * development and tests). Only an operator's `apiUrl` can be one: the URL never comes from a connector's credentials.
   */
  allowPrivateNetworks?: boolean;
  /** The Web API's base URL, set by the operator (tests point it at a fake); default https://slack.com/api/. */
  apiUrl?: string;
  /** The client's retries of HTTP 5xx and network failures (default: 2 retries, after 1 to 2 s and then 3 s). */
  retryConfig?: RetryOptions;
  /** Each request's time limit (default 30 s). */
  timeoutMs?: number;
  /** Messages per conversations.history page when listing what exists (default 999, the method's maximum). */
  listPageSize?: number;
  /** A document whose content is larger than this is a `failure` event (default 8 MiB). */
  maxDocumentBytes?: number;
  /** `now`, for the end of a Retry-After wait (default the system clock). */
  clock?: () => Date;
}

const SLACK_API_URL = 'https://slack.com/api/';

/** The scopes a bot token needs: reading public and private channels, their history, and members' emails. */
const NEEDED_SCOPES = ['channels:read', 'channels:history', 'groups:read', 'groups:history', 'users:read', 'users:read.email'];

export const SLACK_PROVIDER: ProviderDescription = {
  id: 'slack',
  name: 'Slack',
  credentialFields: [
    {
      name: 'bot_token',
      description: `The app's Bot User OAuth Token (xoxb-…), with the scopes ${NEEDED_SCOPES.join(', ')}. The app reads the public channels and the private channels it is invited to; it never posts.`,
      required: true,
      secret: true,
    },
  ],
  filterableFields: SLACK_FILTERABLE_FIELDS,
  resourceOptions: SLACK_RESOURCE_OPTIONS,
  capturesPermissions: true,
};

/**
 * The chat provider (docs/providers/slack.md): a workspace's channels as resources, each top-level message with its
 * thread as a document, the channel's readers as its resource-level permission.
 */
export class SlackProvider implements ConnectorProvider {
  readonly description = SLACK_PROVIDER;
  private readonly settings: SlackClientSettings;
  private readonly listPageSize: number;
  private readonly maxDocumentBytes: number;
  private readonly allowPrivateNetworks: boolean;
  private readonly apiUrlSet: boolean;
  private targetChecked: Promise<void> | undefined;

  constructor(options: SlackProviderOptions = {}) {
    const apiUrl = options.apiUrl ?? SLACK_API_URL;
    this.settings = {
      apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`,
      retryConfig: options.retryConfig ?? { retries: 2, factor: 3, minTimeout: 1000, maxTimeout: 3000, randomize: true },
      timeoutMs: options.timeoutMs ?? 30_000,
      clock: options.clock ?? (() => new Date()),
    };
    this.apiUrlSet = options.apiUrl !== undefined;
    this.allowPrivateNetworks = options.allowPrivateNetworks ?? false;
    this.listPageSize = options.listPageSize ?? 999;
    this.maxDocumentBytes = options.maxDocumentBytes ?? 8 * 1024 * 1024;
  }

  /**
   * A client for this call. An operator's API URL that leads to this service's own network is refused unless private
   * networks are allowed (checked once: the setting does not change while the process runs).
   */
  private async api(ctx: ProviderContext, channel?: string): Promise<SlackApi> {
    const token = botToken(ctx);
    if (this.apiUrlSet && !this.allowPrivateNetworks) {
      this.targetChecked ??= (async () => {
        const host = new URL(this.settings.apiUrl).hostname;
        const reason = await privateTargetReason(host);
        if (reason) throw new TargetForbiddenError(`The Slack API URL leads to ${host}, which is not on the public internet (${reason}); connectors may not connect to this service's own network.`);
      })();
      await this.targetChecked;
    }
    return new SlackApi(token, ctx, this.settings, channel);
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    const api = await this.api(ctx);
    const me = await api.authTest();
    const warnings: string[] = [];
    if (!me.bot_id) warnings.push('The token is a user token, not a bot token: the connector reads what that person can read. A Bot User OAuth Token (xoxb-…) is safer.');
    const scopes = me.response_metadata?.scopes;
    if (scopes) {
      const missing = NEEDED_SCOPES.filter((s) => !scopes.includes(s));
      const reading = missing.filter((s) => s !== 'users:read.email');
      if (reading.length) warnings.push(`The token lacks ${reading.join(', ')}: channels that need them cannot be listed or synced. Add the scopes and reinstall the app.`);
      if (missing.includes('users:read.email')) {
        warnings.push("The token lacks users:read.email, so no member's email is visible: private channels cannot be captured as their members, and each falls back to its resource's acl (set one on every private channel).");
      }
    }
    return { accountScope: me.team_id ?? me.url ?? 'slack', displayName: `${me.user ?? 'app'} in ${me.team ?? me.team_id ?? 'Slack'}`, warnings };
  }

  /**
   * Every public channel and every private channel the app is in. Each private channel the app can read says how its
   * access would be captured and how many members have no visible email (those fall back to the resource's acl).
   */
  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    const api = await this.api(ctx);
    const channels = await api.channels();
    let directory: Map<string, SlackListedUser> | undefined;
    const out: DiscoveredResource[] = [];
    for (const c of channels) {
      if (!c.id) continue;
      let access: Pick<ChannelAccess, 'basis' | 'unresolved'> = { basis: c.is_private ? 'members' : 'workspace', unresolved: 0 };
      if (c.is_private && c.is_member) {
        if (!directory) {
          directory = new Map();
          for await (const page of api.users()) for (const u of page) if (u.id) directory.set(u.id, u);
        }
        access = await channelAccess(api, c.id, c, directory);
      }
      out.push({
        resourceId: c.id,
        resourceType: 'channel',
        name: c.name ?? c.id,
        details: {
          is_private: c.is_private === true,
          is_archived: c.is_archived === true,
          is_member: c.is_member === true,
          num_members: c.num_members ?? null,
          topic: c.topic?.value || null,
          purpose: c.purpose?.value || null,
          created_at: typeof c.created === 'number' ? new Date(c.created * 1000).toISOString() : null,
          access: access.basis,
          unresolved_members: access.unresolved,
          ...(c.is_member === false ? { note: 'The app is not a member: invite it to the channel to sync it.' } : {}),
        },
      });
    }
    return out;
  }

  /**
   * The channel's history from the cursor's position, newest first in pages of `page_size`, each top-level message
   * with its thread (one conversations.replies call per message that has replies), a checkpoint after each page. A
   * sync after a completed one reads from the newest message it saw minus the look-back window, so edits and new
   * replies to recent messages are read again; older changes and deletions are found by the listing.
   */
  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    const channel = resource.resourceId;
    const options = channelOptions(resource);
    const api = await this.api(ctx, channel);
    const position = decodeCursor(channel, cursor);
    const crawl = position.crawl ?? { oldest: position.newest === null ? null : tsMinusSeconds(position.newest, options.lookBackSeconds), below: null, newest: position.newest };
    for (;;) {
      const page = await api.history(channel, crawl.oldest, crawl.below, options.pageSize);
      for (const m of page.messages) {
        crawl.newest = newerTs(crawl.newest, m.ts ?? null);
        if (!isTopLevel(m)) continue;
        const event = await this.messageEvent(api, channel, m);
        if (event) yield event;
      }
      const last = page.messages[page.messages.length - 1]?.ts;
      if (last) crawl.below = last;
      if (!page.hasMore || !last) {
        const done: ChannelPosition = { newest: crawl.newest, crawl: null };
        yield { kind: 'checkpoint', cursor: encodeCursor(channel, done) };
        return;
      }
      yield { kind: 'checkpoint', cursor: encodeCursor(channel, { newest: position.newest, crawl: { ...crawl } }) };
    }
  }

  /**
   * Every top-level message of the channel with its content hash, from conversations.history alone (999 per page):
   * the whole history is read on each call, one request per 999 messages.
   */
  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    const channel = resource.resourceId;
    const api = await this.api(ctx, channel);
    let below: string | null = null;
    for (;;) {
      const page = await api.history(channel, null, below, this.listPageSize);
      for (const m of page.messages) if (isTopLevel(m)) yield { id: m.ts!, contentHash: messageHash(m) };
      const last = page.messages[page.messages.length - 1]?.ts;
      if (!page.hasMore || !last) return;
      below = last;
    }
  }

  /** The given messages as they are now, one conversations.replies call each (the message and its thread). */
  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    const channel = resource.resourceId;
    const api = await this.api(ctx, channel);
    for (const id of ids) {
      const thread = isTs(id) ? await api.thread(channel, id) : [];
      const parent = thread[0];
      // Gone, or not a top-level message (a reply's ts answers with its thread, whose first message is the parent).
      if (!parent || parent.ts !== id || !isTopLevel(parent)) yield { kind: 'delete', id };
      else yield this.sized(messageDocument(channel, parent, thread.slice(1)));
    }
  }

  async capturePermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<ResourcePermission> {
    return (await this.channelAccess(ctx, resource)).permission;
  }

  /** The verdict with how it was reached: the member count and how many members have no visible email. */
  async channelAccess(ctx: ProviderContext, resource: ResourceConfig): Promise<ChannelAccess> {
    const api = await this.api(ctx, resource.resourceId);
    return channelAccess(api, resource.resourceId, await api.channelInfo(resource.resourceId));
  }

  /** A history message as its document: with its thread read when it has replies. */
  private async messageEvent(api: SlackApi, channel: string, m: SlackMessage): Promise<SyncEvent | undefined> {
    if (!hasThread(m)) return this.sized(messageDocument(channel, m, []));
    const thread = await api.thread(channel, m.ts!);
    // The thread's copy of the message is as new as its replies; a message deleted since the page was read is skipped
    // (the listing no longer has it, so pruning deletes it).
    const parent = thread[0]?.ts === m.ts ? thread[0] : undefined;
    return parent ? this.sized(messageDocument(channel, parent, thread.slice(1))) : undefined;
  }

  private sized(doc: SyncedDocument): SyncEvent {
    const bytes = doc.content.kind === 'text' ? Buffer.byteLength(doc.content.text) : doc.content.bytes.byteLength;
    if (bytes <= this.maxDocumentBytes) return { kind: 'upsert', doc };
    return {
      kind: 'failure',
      id: doc.id,
      error: new DocumentError(`The message ${doc.id} posted at ${tsToIso(doc.id)} and its thread make ${bytes} bytes of content, more than the ${this.maxDocumentBytes} a document may have.`),
    };
  }
}
