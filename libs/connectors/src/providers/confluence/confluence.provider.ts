import { ConfluenceClient, type Models } from 'confluence.js';
import type { LookupFn } from '@crs/network/address-policy';
import { AuthError, ConfigurationError, DocumentError, ScopeError } from '../../provider-errors';
import type {
  AccountIdentity,
  ConnectorProvider,
  DiscoveredResource,
  ExistingDocument,
  PermissionCapture,
  ProviderContext,
  ProviderDescription,
  ResourceConfig,
  ResourcePermission,
  SyncCursor,
  SyncEvent,
} from '../../provider.port';
import { cqlSince, decodeCursor, encodeCursor } from './confluence-cursor';
import { toProviderError } from './confluence-errors';
import { FILTERABLE_FIELDS, PAGE_EXPAND, pageHash, pageToDocument } from './confluence-mapping';
import { DEFAULT_MAX_PAGES, PageGuard } from './confluence-pages';
import { type GroupMembers, namesNoReader, pagePermission, permissionDigest, ReaderResolver, type ReaderLevel, restrictionLevel, spaceReadLevel } from './confluence-permissions';
import { type ConfluenceTarget, targetFromCredentials } from './confluence-target';
import { ConfluenceHttpError, ConfluenceTransport } from './confluence-transport';

export interface ConfluenceProviderOptions {
  /**
   * Whether base_url may lead to a loopback, private, link-local or reserved address, and use plain http
   * (CONNECTOR_ALLOW_PRIVATE_NETWORKS; development and tests). Off: such a wiki is refused with a TargetForbiddenError
   * before any request, and every connection checks the addresses it connects to again at connect time.
   */
  allowPrivateNetworks?: boolean;
  /** How names are resolved for the address checks (tests replace it). */
  lookup?: LookupFn;
  /** Pages per crawl request, which read bodies (default 50), unless a resource sets `page_size`. */
  pageSize?: number;
  /** Pages per listing and restriction-sweep request, which read no bodies (default 250). */
  listPageSize?: number;
  /** How far before the cursor's time a crawl starts again (default 5 minutes). */
  overlapMs?: number;
  /** Pauses before retrying a 5xx or a network failure; its length is the number of retries (default 0.5 s, 2 s). */
  retryDelaysMs?: readonly number[];
  /** The deadline of one request (default 30 s). */
  requestTimeoutMs?: number;
  /** The most bytes of one answer that are read (default 64 MiB); a larger answer is a ConfigurationError. */
  maxResponseBytes?: number;
  /** Members read per group at most (default 5,000); a larger group is named as a group principal. */
  maxGroupMembers?: number;
  /** A page whose text is larger than this is a `failure` event (default 8 MiB). */
  maxDocumentBytes?: number;
  /** Pages one listing may take (default 10,000); a longer one stops with a ConfigurationError. */
  maxPages?: number;
  /** The time Retry-After in seconds counts from. */
  now?: () => Date;
}

export const CONFLUENCE_PROVIDER: ProviderDescription = {
  id: 'confluence',
  name: 'Confluence wiki',
  credentialFields: [
    { name: 'base_url', description: 'The wiki\'s address: https://<site>.atlassian.net/wiki for Confluence Cloud, or a self-hosted wiki\'s root URL.', required: true, secret: false },
    { name: 'email', description: 'The email of the Atlassian account the connector reads as; it sees what that account may see.', required: true, secret: false },
    { name: 'api_token', description: 'An API token of that account (id.atlassian.com, Security, API tokens).', required: true, secret: true },
  ],
  filterableFields: FILTERABLE_FIELDS,
  resourceOptions: [{ name: 'page_size', description: 'Pages read per request while crawling (1 to 250, default 50).' }],
  capturesPermissions: true,
};

/** One provider call's connection to the wiki. */
interface Session {
  target: ConfluenceTarget;
  client: ConfluenceClient;
  transport: ConfluenceTransport;
}

/** A page of the space as the restriction sweep sees it. */
interface PageNode {
  id: string;
  /** ancestor ids, root first */
  ancestors: string[];
  restriction: ReaderLevel | null;
}

const GROUP_PAGE = 200;
/** What the restriction sweep expands on each page of its search: ancestors and read restrictions, no body. */
const SWEEP_EXPAND = ['ancestors', 'restrictions.read.restrictions.user', 'restrictions.read.restrictions.group'];
const NO_RESTRICTION: PermissionCapture = { status: 'captured', acl: null };
const isUnrestricted = (p: PermissionCapture) => p.status === 'captured' && p.acl === null;

/**
 * The wiki provider: the spaces of a Confluence site as resources, their pages as documents, the space's read
 * permission as the resource-level verdict and page read restrictions (with their ancestors') as per-document
 * permissions (docs/providers/confluence.md).
 */
export class ConfluenceProvider implements ConnectorProvider {
  readonly description = CONFLUENCE_PROVIDER;
  private readonly allowPrivate: boolean;
  private readonly lookup: LookupFn | undefined;
  private readonly pageSize: number;
  private readonly listPageSize: number;
  private readonly overlapMs: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly requestTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxGroupMembers: number;
  private readonly maxDocumentBytes: number;
  private readonly maxPages: number;
  private readonly now: () => Date;
  /**
   * The restriction sweep a complete listing took, by the context it was called with and the space. The engine lists
   * a resource and then syncs it with one context, so the sync takes the sweep from the listing and the space is read
   * once per sync rather than twice. A sync takes it once (a later call with the same context sweeps again), and a
   * context that is dropped takes its entry with it.
   */
  private readonly listedSweeps = new WeakMap<ProviderContext, Map<string, Map<string, PageNode>>>();

  constructor(options: ConfluenceProviderOptions = {}) {
    this.allowPrivate = options.allowPrivateNetworks ?? false;
    this.lookup = options.lookup;
    this.pageSize = options.pageSize ?? 50;
    this.listPageSize = options.listPageSize ?? 250;
    this.overlapMs = options.overlapMs ?? 300_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [500, 2000];
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
    this.maxGroupMembers = options.maxGroupMembers ?? 5000;
    this.maxDocumentBytes = options.maxDocumentBytes ?? 8 * 1024 * 1024;
    this.maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
    this.now = options.now ?? (() => new Date());
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    return this.within(ctx, undefined, async (s) => {
      const user = await s.client.users.getCurrentUser();
      if (user.type === 'anonymous' || !user.accountId) {
        throw new AuthError(`Confluence at ${s.target.site} did not sign in ${s.target.email} with the API token and answered as an anonymous visitor. Check the email and create a new API token.`);
      }
      return { accountScope: s.target.site, displayName: `${user.displayName || user.publicName} on ${s.target.site}`, warnings: [] };
    });
  }

  /**
   * Every space the account can see, with what permission capture will make of its readers: `captured` (emails, or
   * group principals past 1,000), `public` (anonymous access), or `resource_rule` when some readers' emails are hidden
   * (`unresolved_readers` says how many) and the resource's own `acl` governs.
   */
  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    return this.within(ctx, undefined, async (s) => {
      const resolver = this.resolver(s);
      const found: DiscoveredResource[] = [];
      const guard = new PageGuard('the spaces the account can see', s.target.site, this.maxPages, '0');
      const listed = new Set<string>();
      for (let start = 0; ; ) {
        ctx.signal?.throwIfAborted();
        const page = await s.client.space.getSpaces({ start, limit: this.listPageSize, expand: ['permissions'] });
        // a page that adds no space: the listing did not move on
        if (page.results.length > 0 && page.results.every((space) => listed.has(space.key))) throw guard.stalled();
        for (const space of page.results) listed.add(space.key);
        for (const space of page.results) {
          const level = spaceReadLevel(space);
          if (namesNoReader(level)) {
            found.push({ resourceId: space.key, resourceType: 'space', name: space.name, details: { key: space.key, type: space.type, status: space.status, permission_capture: 'unreadable', readers: null, unresolved_readers: 0 } });
            continue;
          }
          const readers = await resolver.spaceReaders(level);
          const capture = level.anonymous ? 'public' : readers.acl === null ? 'too_many_readers' : readers.unresolved > 0 ? 'resource_rule' : 'captured';
          found.push({
            resourceId: space.key,
            resourceType: 'space',
            name: space.name,
            details: { key: space.key, type: space.type, status: space.status, permission_capture: capture, readers: readers.acl?.length ?? null, unresolved_readers: readers.unresolved },
          });
        }
        if (!page._links?.next) return found;
        start += page.results.length;
        guard.advance(String(start));
      }
    });
  }

  /**
   * The space's read permission (rule 11): `__public__` with anonymous access, else its readers' emails with groups
   * expanded (group principals past 1,000). When some readers' emails are hidden the capture says nothing
   * (`acl: null`), so the resource's own rule governs; discovery reports how many are unresolved. A permission
   * listing that names no reader at all is a ScopeError: the capture fails, which never widens access.
   */
  async capturePermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<ResourcePermission> {
    const key = spaceKeyOf(resource);
    return this.within(ctx, key, async (s) => {
      const level = spaceReadLevel(await this.space(s, key));
      if (namesNoReader(level)) {
        throw new ScopeError(
          `Confluence at ${s.target.site} listed no read permission for space ${key}: the account ${s.target.email} may not see the space's permissions, or Confluence returned none. Its readers are not captured and its pages keep the last captured verdict (none: closed to every caller). Let the account see the space's permissions (space admin), or turn permission capture off and set the resource's acl.`,
        );
      }
      const readers = await this.resolver(s).spaceReaders(level);
      if (readers.acl === null) {
        throw new ConfigurationError(`Space ${key} is readable by more than 1,000 users and groups listed one by one, more than a document's access list may hold; set the resource's acl instead.`);
      }
      if (readers.unresolved > 0) return { status: 'captured', acl: null, unresolved: readers.unresolved };
      return { status: 'captured', acl: readers.acl };
    });
  }

  /**
   * A sync of one space: the restriction sweep (every page's ancestors and read restriction, no bodies), a
   * `permission` event for each page whose computed permission differs from the digest in the cursor, then the crawl
   * of pages modified since the cursor's time less the overlap, oldest first, with bodies; a checkpoint after each
   * page of results and at the end.
   */
  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    const key = spaceKeyOf(resource);
    const pageSize = pageSizeOf(resource, this.pageSize);
    yield* this.iterate(ctx, key, async function* (this: ConfluenceProvider, s: Session) {
      const position = decodeCursor(key, cursor);
      const tree = await this.sweep(s, key, ctx);
      const permissions = this.permissions(s, key, tree);
      const now = new Map<string, PermissionCapture>();
      const restricted: Record<string, string> = {};
      for (const node of tree.values()) {
        const permission = await permissions.of(node);
        if (isUnrestricted(permission)) continue;
        now.set(node.id, permission);
        restricted[node.id] = permissionDigest(permission);
      }
      // A first crawl upserts every page with its permission; after that, what the sweep changed is sent alone.
      if (position.since !== null) {
        let changed = 0;
        for (const id of new Set([...Object.keys(position.restricted), ...Object.keys(restricted)])) {
          if (!tree.has(id) || position.restricted[id] === restricted[id]) continue;
          yield { kind: 'permission', id, permission: now.get(id) ?? NO_RESTRICTION };
          changed++;
        }
        if (changed > 0) yield { kind: 'checkpoint', cursor: encodeCursor(key, { since: position.since, restricted }) };
      }

      let since = position.since;
      // CQL reads dates in the account's time zone, which its owner may change at any time: read it for each crawl.
      const bound = since === null ? '' : ` and lastmodified >= "${cqlSince(since, this.overlapMs, await this.timeZone(s))}"`;
      const cql = `space = "${key}" and type = page${bound} order by lastmodified asc`;
      const guard = new PageGuard(`the crawl of space ${key}`, s.target.site, this.maxPages, '');
      for (let next: string | undefined; ; ) {
        ctx.signal?.throwIfAborted();
        const page = await s.client.content.searchContentByCQL({ cql, limit: pageSize, cursor: next, expand: PAGE_EXPAND });
        for (const content of page.results) {
          if (content.type !== 'page') continue;
          let permission = now.get(content.id) ?? NO_RESTRICTION;
          if (!tree.has(content.id)) {
            // Created after the sweep: its own restriction is in this answer, its ancestors' in the sweep.
            permission = await permissions.of({ id: content.id, ancestors: (content.ancestors ?? []).map((a) => a.id), restriction: await this.restrictionOf(s, content) });
            if (isUnrestricted(permission)) delete restricted[content.id];
            else restricted[content.id] = permissionDigest(permission);
          }
          yield this.pageEvent(content, key, s.target.wikiUrl, permission);
          const when = content.version?.when;
          if (when && (since === null || Date.parse(when) > Date.parse(since))) since = new Date(when).toISOString();
        }
        yield { kind: 'checkpoint', cursor: encodeCursor(key, { since, restricted }) };
        next = nextCursor(page, s.target.wikiUrl, guard);
        if (next === undefined) return;
      }
    });
  }

  /**
   * Every page of the space with the hash of its current version: one CQL search with versions, ancestors and read
   * restrictions, no bodies. The ancestors and restrictions make the restriction sweep of the sync that follows with
   * the same context (`listedSweeps`).
   */
  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    const key = spaceKeyOf(resource);
    yield* this.iterate(ctx, key, async function* (this: ConfluenceProvider, s: Session) {
      const tree = new Map<string, PageNode>();
      for await (const content of this.searchAll(s, ctx, `the listing of space ${key}`, `space = "${key}" and type = page order by lastmodified asc`, ['version', ...SWEEP_EXPAND])) {
        if (content.type !== 'page') continue;
        tree.set(content.id, await this.pageNode(s, content));
        yield { id: content.id, contentHash: pageHash(content.id, content.version?.number ?? 0) };
      }
      // An empty listing is kept from the sync: its sweep asks whether the space still exists.
      if (tree.size > 0) {
        const bySpace = this.listedSweeps.get(ctx) ?? new Map<string, Map<string, PageNode>>();
        bySpace.set(key, tree);
        this.listedSweeps.set(ctx, bySpace);
      }
    });
  }

  /**
   * The current state of given pages (those the listing shows changed behind the cursor: a back-dated edit, a page
   * the crawl's pagination stepped over): the restriction sweep for their permissions, then each page by id. A page
   * that is gone, trashed or now in another space is a `delete`.
   */
  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    const key = spaceKeyOf(resource);
    yield* this.iterate(ctx, key, async function* (this: ConfluenceProvider, s: Session) {
      const tree = await this.sweep(s, key, ctx);
      const permissions = this.permissions(s, key, tree);
      for (const id of ids) {
        ctx.signal?.throwIfAborted();
        let content: Models.Content;
        try {
          content = await s.client.content.getContentById({ id, expand: [...PAGE_EXPAND, 'space'] });
        } catch (err) {
          if (err instanceof ConfluenceHttpError && err.status === 404) {
            yield { kind: 'delete', id };
            continue;
          }
          throw err;
        }
        if (content.type !== 'page' || content.status !== 'current' || (content.space && content.space.key !== key)) {
          yield { kind: 'delete', id };
          continue;
        }
        const node = tree.get(id) ?? { id, ancestors: (content.ancestors ?? []).map((a) => a.id), restriction: await this.restrictionOf(s, content) };
        yield this.pageEvent(content, key, s.target.wikiUrl, await permissions.of(node));
      }
    });
  }

  private pageEvent(content: Models.Content, key: string, wikiUrl: string, permission: PermissionCapture): SyncEvent {
    const doc = pageToDocument(content, key, wikiUrl, permission);
    const bytes = doc.content.kind === 'text' ? Buffer.byteLength(doc.content.text) : doc.content.bytes.byteLength;
    if (bytes > this.maxDocumentBytes) {
      return { kind: 'failure', id: doc.id, error: new DocumentError(`Page ${content.id} ("${content.title}") of space ${key} makes ${bytes} bytes of text, more than the ${this.maxDocumentBytes} a document may have.`) };
    }
    return { kind: 'upsert', doc };
  }

  /**
   * Every page's ancestors and read restriction, in pages of `listPageSize`, without bodies; taken from the listing
   * when one was just made with the same context.
   */
  private async sweep(s: Session, key: string, ctx: ProviderContext): Promise<Map<string, PageNode>> {
    const listed = this.listedSweeps.get(ctx)?.get(key);
    if (listed) {
      this.listedSweeps.get(ctx)!.delete(key);
      return listed;
    }
    const tree = new Map<string, PageNode>();
    for await (const content of this.searchAll(s, ctx, `the restriction sweep of space ${key}`, `space = "${key}" and type = page order by lastmodified asc`, SWEEP_EXPAND)) {
      if (content.type === 'page') tree.set(content.id, await this.pageNode(s, content));
    }
    // A space with no page may be a space that is gone: a missing space is a ResourceGoneError, not an empty one.
    if (tree.size === 0) await this.space(s, key);
    return tree;
  }

  private async pageNode(s: Session, content: Models.Content): Promise<PageNode> {
    return { id: content.id, ancestors: (content.ancestors ?? []).map((a) => a.id), restriction: await this.restrictionOf(s, content) };
  }

  private async *searchAll(s: Session, ctx: ProviderContext, what: string, cql: string, expand: string[]): AsyncIterable<Models.Content> {
    const guard = new PageGuard(what, s.target.site, this.maxPages, '');
    for (let next: string | undefined; ; ) {
      ctx.signal?.throwIfAborted();
      const page = await s.client.content.searchContentByCQL({ cql, limit: this.listPageSize, cursor: next, expand });
      yield* page.results;
      next = nextCursor(page, s.target.wikiUrl, guard);
      if (next === undefined) return;
    }
  }

  /**
   * A page's read restriction, from what its answer expanded; read in full from the restrictions endpoint when the
   * expansion was cut at its limit, or absent.
   */
  private async restrictionOf(s: Session, content: Models.Content): Promise<ReaderLevel | null> {
    const read = content.restrictions?.read;
    const cut = (a: { results: unknown[]; limit: number } | undefined) => a !== undefined && a.limit > 0 && a.results.length >= a.limit;
    if (read && !cut(read.restrictions?.user) && !cut(read.restrictions?.group)) return restrictionLevel(read);
    return this.fetchRestriction(s, content.id);
  }

  private async fetchRestriction(s: Session, id: string): Promise<ReaderLevel | null> {
    const users = new Map<string, Models.User>();
    const groups = new Set<string>();
    const guard = new PageGuard(`the read restriction of page ${id}`, s.target.site, this.maxPages, '0');
    for (let start = 0; ; ) {
      let r: Models.ContentRestriction;
      try {
        r = await s.client.contentRestrictions.getRestrictionsForOperation({ id, operationKey: 'read', start, limit: GROUP_PAGE });
      } catch (err) {
        // A page deleted meanwhile restricts nothing any more; pruning removes it.
        if (err instanceof ConfluenceHttpError && err.status === 404) return restrictionLevel(undefined);
        throw err;
      }
      const before = users.size + groups.size;
      for (const u of r.restrictions?.user?.results ?? []) users.set(u.accountId, u);
      for (const g of r.restrictions?.group?.results ?? []) groups.add(g.id);
      const longest = Math.max(r.restrictions?.user?.results.length ?? 0, r.restrictions?.group?.results.length ?? 0);
      if (longest < GROUP_PAGE) break;
      // a full page that adds nobody: the listing did not move on
      if (users.size + groups.size === before) throw guard.stalled();
      start += GROUP_PAGE;
      guard.advance(String(start));
    }
    return users.size === 0 && groups.size === 0 ? null : { anonymous: false, users: [...users.values()], groupIds: [...groups] };
  }

  /** Per-page permissions over one sweep: the space's read permission and groups are read once, when first needed. */
  private permissions(s: Session, key: string, tree: Map<string, PageNode>) {
    const resolver = this.resolver(s);
    let space: Promise<ReaderLevel> | undefined;
    const ancestorRestrictions = new Map<string, Promise<ReaderLevel | null>>();
    const restrictionOfAncestor = (id: string): Promise<ReaderLevel | null> => {
      const node = tree.get(id);
      if (node) return Promise.resolve(node.restriction);
      let found = ancestorRestrictions.get(id);
      if (!found) {
        found = this.fetchRestriction(s, id);
        ancestorRestrictions.set(id, found);
      }
      return found;
    };
    return {
      of: async (node: PageNode): Promise<PermissionCapture> => {
        const chain = (await Promise.all([...node.ancestors.map(restrictionOfAncestor), Promise.resolve(node.restriction)])).filter((l): l is ReaderLevel => l !== null);
        if (chain.length === 0) return NO_RESTRICTION;
        space ??= this.space(s, key).then(spaceReadLevel);
        const spaceLevel = await space;
        // The space's readers are unknown (its permission listing named none): the page is closed, never opened to
        // whoever its restrictions name.
        if (namesNoReader(spaceLevel)) return { status: 'failed' };
        return pagePermission(await resolver.pageReaders(spaceLevel, chain));
      },
    };
  }

  private resolver(s: Session): ReaderResolver {
    return new ReaderResolver((groupId) => this.groupMembers(s, groupId));
  }

  /** A group's members, 200 a request, up to `maxGroupMembers`. A group that no longer exists has none. */
  private async groupMembers(s: Session, groupId: string): Promise<GroupMembers> {
    const members = new Map<string, Models.User>();
    const guard = new PageGuard(`the members of group ${groupId}`, s.target.site, this.maxPages, '0');
    for (let start = 0; ; ) {
      if (members.size >= this.maxGroupMembers) return { members: [...members.values()], complete: false };
      let page: Models.UserArray;
      try {
        page = await s.client.group.getGroupMembersByGroupId({ groupId, start, limit: GROUP_PAGE });
      } catch (err) {
        if (err instanceof ConfluenceHttpError && err.status === 404) return { members: [], complete: true };
        throw err;
      }
      const before = members.size;
      for (const m of page.results) members.set(m.accountId, m);
      if (page.results.length === 0 || page.results.length < page.limit) return { members: [...members.values()], complete: true };
      // a full page that adds nobody: the listing did not move on
      if (members.size === before) throw guard.stalled();
      start += page.results.length;
      guard.advance(String(start));
    }
  }

  /** The time zone of the connector's account (an IANA name), which Confluence reads CQL dates in. */
  private async timeZone(s: Session): Promise<string | undefined> {
    const user: Models.User & { timeZone?: unknown } = await s.client.users.getCurrentUser();
    return typeof user.timeZone === 'string' && user.timeZone !== '' ? user.timeZone : undefined;
  }

  private space(s: Session, key: string): Promise<Models.Space> {
    return s.client.space.getSpace({ spaceKey: key, expand: ['permissions'] });
  }

  private async open(ctx: ProviderContext): Promise<Session> {
    const target = await targetFromCredentials(ctx.credentials, { allowPrivateNetworks: this.allowPrivate, ...(this.lookup ? { lookup: this.lookup } : {}) });
    const transport = new ConfluenceTransport({
      site: target.site,
      publicOnly: !this.allowPrivate,
      ...(this.lookup ? { lookup: this.lookup } : {}),
      retryDelaysMs: this.retryDelaysMs,
      requestTimeoutMs: this.requestTimeoutMs,
      maxResponseBytes: this.maxResponseBytes,
      now: this.now,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    try {
      const client = new ConfluenceClient({
        host: target.wikiUrl,
        apiPrefix: '/rest/',
        authentication: { basic: { email: target.email, apiToken: target.apiToken } },
        baseRequestConfig: { adapter: transport.adapter },
      });
      return { target, client, transport };
    } catch (err) {
      transport.close();
      throw new ConfigurationError(`The Confluence client refused the credentials' form: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Runs one call with a session, closing it after and placing its errors. */
  private async within<T>(ctx: ProviderContext, space: string | undefined, run: (s: Session) => Promise<T>): Promise<T> {
    const s = await this.open(ctx);
    try {
      return await run(s);
    } catch (err) {
      throw toProviderError(err, { site: s.target.site, ...(space !== undefined ? { space } : {}) });
    } finally {
      s.transport.close();
    }
  }

  /** As `within`, for a call that yields. */
  private async *iterate<T>(ctx: ProviderContext, space: string, run: (this: ConfluenceProvider, s: Session) => AsyncIterable<T>): AsyncIterable<T> {
    const s = await this.open(ctx);
    try {
      yield* run.call(this, s);
    } catch (err) {
      throw toProviderError(err, { site: s.target.site, space });
    } finally {
      s.transport.close();
    }
  }
}

function spaceKeyOf(resource: ResourceConfig): string {
  const key = resource.resourceId.trim();
  if (!/^~?[A-Za-z0-9_-]+$/.test(key)) throw new ConfigurationError(`"${resource.resourceId}" is not a Confluence space key; use the key discovery lists (e.g. ENG).`);
  return key;
}

function pageSizeOf(resource: ResourceConfig, fallback: number): number {
  const value = resource.options?.page_size;
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 250) throw new ConfigurationError(`page_size must be a whole number from 1 to 250 (got ${JSON.stringify(value)}).`);
  return value;
}

/**
 * The cursor of the next page of a CQL search, from the relative URL in `_links.next`; undefined at the end. A next
 * link without a cursor, or with one already read, does not move on (`guard`).
 */
function nextCursor(page: Models.ContentArray, wikiUrl: string, guard: PageGuard): string | undefined {
  const next = page._links?.next;
  if (typeof next !== 'string' || next === '') return undefined;
  const cursor = new URL(next, `${wikiUrl}/`).searchParams.get('cursor') ?? '';
  guard.advance(cursor);
  return cursor;
}
