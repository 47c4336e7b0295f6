import { createHash } from 'node:crypto';
import { HttpException, type Version3Models } from 'jira.js';
import { ConfigurationError, DocumentError, ProviderError, ScopeError } from '../../provider-errors';
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
  SyncEvent,
} from '../../provider.port';
import { browseAccess, Directory, grantsPerIssue, issueBrowsePermission, issueGrantsOf, SecurityLevels, type BrowseAccess } from './jira-access';
import { JiraApi } from './jira-api';
import { ISSUE_FIELDS, issueDocument, JIRA_FILTERABLE_FIELDS, type SearchedIssue } from './jira-content';
import { advance, decodeCursor, encodeCursor, jqlLowerBound, type CrawlPosition, type JiraSyncState } from './jira-cursor';
import { DEFAULT_MAX_PAGES } from './jira-pages';
import { jiraClient, refusePrivateSite, siteFromCredentials, type JiraClientSettings } from './jira-site';

export interface JiraProviderOptions {
  /**
   * Whether base_url may lead to a loopback, private, link-local or reserved address, and use http://
   * (CONNECTOR_ALLOW_PRIVATE_NETWORKS; development and tests). Off by default: such a site is refused with a
   * TargetForbiddenError before anything is sent, and every connection resolves its host again at connect time.
   */
  allowPrivateNetworks?: boolean;
  /** Issues per search page unless a resource sets `page_size` (default 50, at most 100). */
  pageSize?: number;
  /** Pauses before sending a call again after a 5xx or a dropped connection; its length is the number of retries. */
  retryDelaysMs?: readonly number[];
  /** Bound on one HTTP request (default 30 s). */
  requestTimeoutMs?: number;
  /** Bound on the body of one answer (default 32 MiB); a larger answer is refused with a ConfigurationError. */
  maxResponseBytes?: number;
  /** Pages one listing may take (default 10,000); past that it stops with a ConfigurationError. */
  maxPages?: number;
  /** How often a sync reads every issue again to find what the updated-time query cannot see (default 24 h). */
  fullSweepIntervalMs?: number;
  /** How long discovery spends describing projects' browse access before listing the rest without it (default 8 s). */
  discoveryBudgetMs?: number;
  clock?: () => Date;
}

export const JIRA_PROVIDER: ProviderDescription = {
  id: 'jira',
  name: 'Jira issue tracker',
  credentialFields: [
    { name: 'base_url', description: 'The Jira site, such as https://your-domain.atlassian.net (REST API v3). It must be on the public internet.', required: true, secret: false },
    { name: 'email', description: 'The email address of the Atlassian account the connector signs in as.', required: true, secret: false },
    {
      name: 'api_token',
      description: 'An API token of that account (id.atlassian.com, Security, API tokens). The account needs Browse projects on the projects to sync, and Administer Jira to read who may browse them and see their security levels.',
      required: true,
      secret: true,
    },
  ],
  filterableFields: JIRA_FILTERABLE_FIELDS,
  resourceOptions: [
    { name: 'page_size', description: 'Issues per search request, 1 to 100 (default 50).' },
    { name: 'full_sweep_hours', description: 'How often every issue is read again, to find back-dated changes the updated-time query cannot see (default 24; at least 1).' },
  ],
  capturesPermissions: true,
};

const PROJECT_KEY = /^[A-Za-z][A-Za-z0-9_]{0,254}$/;

/** Jira's timestamps (`2024-04-02T08:01:30.000+0000`) as epoch ms. */
function epochOf(jiraTime: string | undefined | null): number {
  if (!jiraTime) return Number.NaN;
  return Date.parse(jiraTime.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
}

/**
 * The issue tracker provider: the projects of a Jira site as resources, each issue with its comments as one document,
 * synced by an updated-time JQL query (docs/providers/jira.md).
 */
export class JiraProvider implements ConnectorProvider {
  readonly description = JIRA_PROVIDER;
  private readonly settings: JiraClientSettings;
  private readonly pageSize: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly fullSweepIntervalMs: number;
  private readonly discoveryBudgetMs: number;
  private readonly maxPages: number;
  private readonly clock: () => Date;

  constructor(options: JiraProviderOptions = {}) {
    this.settings = { allowPrivateNetworks: options.allowPrivateNetworks ?? false, requestTimeoutMs: options.requestTimeoutMs ?? 30_000, maxResponseBytes: options.maxResponseBytes ?? 32 * 1024 * 1024 };
    this.maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
    this.pageSize = options.pageSize ?? 50;
    this.retryDelaysMs = options.retryDelaysMs ?? [250, 1000];
    this.fullSweepIntervalMs = options.fullSweepIntervalMs ?? 24 * 3_600_000;
    this.discoveryBudgetMs = options.discoveryBudgetMs ?? 8_000;
    this.clock = options.clock ?? (() => new Date());
  }

  private async api(ctx: ProviderContext): Promise<JiraApi> {
    const site = siteFromCredentials(ctx.credentials);
    await refusePrivateSite(site, this.settings);
    return new JiraApi(jiraClient(site, ctx, this.settings), site, { delaysMs: this.retryDelaysMs, signal: ctx.signal, clock: this.clock, maxPages: this.maxPages });
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    const api = await this.api(ctx);
    const me = await api.call('checking the credentials', (c) => c.myself.getCurrentUser());
    const host = api.site.baseUrl.replace(/^https?:\/\//, '');
    const warnings: string[] = [];
    if (me.active === false) warnings.push(`The account ${me.displayName ?? me.accountId} is deactivated; Jira may refuse it soon.`);
    return { accountScope: host, displayName: `${me.displayName ?? me.accountId} on ${host}`, warnings };
  }

  /**
   * Every project the account can browse. Each one's details say who holds its browse access as the connector would
   * capture it (how many people, how many of them it cannot resolve because Jira hides their email), as far as
   * `discoveryBudgetMs` allows: this is where a person decides whether a resource needs an `acl` of its own.
   */
  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    const api = await this.api(ctx);
    const projects: Version3Models.Project[] = [];
    const guard = api.pages('the projects');
    for (let startAt = 0; ; guard.next(startAt)) {
      api.checkAborted();
      const page = await api.call('listing the projects', (c) => c.projects.searchProjects({ startAt, maxResults: 50, orderBy: 'key' }));
      projects.push(...page.values);
      startAt += page.values.length;
      if (page.isLast !== false || page.values.length === 0) break;
    }
    const started = Date.now();
    const directory = new Directory(api);
    const out: DiscoveredResource[] = [];
    for (const p of projects) {
      let access: Record<string, unknown> | null = null;
      if (Date.now() - started < this.discoveryBudgetMs) {
        try {
          const browse = await browseAccess(api, p.key, directory);
          const verdict = browse.acl === null ? 'resource_rule' : browse.acl[0] === '__public__' ? 'public' : 'listed';
          access = { verdict, principals: browse.principals, unresolved_members: browse.unresolved };
        } catch (err) {
          if (!(err instanceof ProviderError) || err.kind === 'auth' || err.kind === 'rate_limited') throw err;
          access = { error: err.message };
        }
      }
      out.push({ resourceId: p.key, resourceType: 'project', name: p.name, details: { id: p.id, key: p.key, project_type: p.projectTypeKey ?? null, browse_access: access } });
    }
    return out;
  }

  /**
   * Who holds BROWSE_PROJECTS (rule 11): emails, groups expanded. When some holder cannot be named (Jira hides the
   * email), the verdict is `acl: null` with the `unresolved` count: the resource's API rule governs, else nobody, and the
   * resource's status says so.
   */
  async capturePermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<ResourcePermission> {
    const api = await this.api(ctx);
    const browse = await browseAccess(api, projectKeyOf(resource));
    return browse.acl === null ? { status: 'captured', acl: null, unresolved: browse.unresolved } : { status: 'captured', acl: browse.acl };
  }

  /**
   * Every issue of the project now, by keyset on the key (`key > "OPS-120" ORDER BY key ASC`, ids only), so an issue
   * deleted while the listing pages cannot shift another out of it. No content hash: telling one needs the issue.
   */
  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    const api = await this.api(ctx);
    const key = projectKeyOf(resource);
    const guard = api.pages(`the issue ids of project ${key}`);
    for (let after: string | null = null; ; guard.next(after ?? '')) {
      api.checkAborted();
      const jql: string = `project = "${key}"${after ? ` AND key > "${after}"` : ''} ORDER BY key ASC`;
      const page: Version3Models.SearchAndReconcileResults = await api.call(`listing the issues of project ${key}`, (c) => c.issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql, maxResults: 5000, fields: ['id'] }), true);
      const issues = page.issues ?? [];
      for (const issue of issues) yield { id: issue.id };
      if (page.nextPageToken === undefined || issues.length === 0) return;
      after = issues[issues.length - 1].key;
    }
  }

  /**
   * The issues updated since the cursor, oldest first (docs/providers/jira.md, "Incremental sync"): first a
   * `permission` event for each issue of a security level whose members changed (a change that moves no issue), then `updated >= <minute of the
   * position>` page by page, each page read again from the position it reached, so an issue edited during the crawl
   * moves to the end of the query instead of shifting another out of it. Every `full_sweep_hours` the crawl starts
   * again from the first issue.
   */
  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    const api = await this.api(ctx);
    const key = projectKeyOf(resource);
    const pageSize = optionNumber(resource, 'page_size', this.pageSize, 1, 100);
    const sweepEvery = optionNumber(resource, 'full_sweep_hours', this.fullSweepIntervalMs / 3_600_000, 1, 24 * 365) * 3_600_000;
    const state: JiraSyncState = decodeCursor(key, cursor);
    const now = this.clock().getTime();
    const me = await api.call('reading the account\'s time zone', (c) => c.myself.getCurrentUser());
    const timeZone = me.timeZone ?? 'UTC';
    const directory = new Directory(api);
    let browseRead: Promise<BrowseAccess> | undefined;
    const browse = () => (browseRead ??= browseAccess(api, key, directory));
    const levels = new SecurityLevels(api, key, directory, browse);
    const checkpoint = (): SyncEvent => ({ kind: 'checkpoint', cursor: encodeCursor(key, state) });

    // Browse grants to the people each issue names (its reporter, its assignee, a user-picker field's users) go into
    // each issue's own permission, with the project's list.
    let issueBrowse: BrowseAccess | null = null;
    let browseDigest = 'none';
    try {
      const grants = await directory.browseGrants(key);
      if (grantsPerIssue(issueGrantsOf(grants))) {
        issueBrowse = await browse();
        browseDigest = createHash('sha256').update(JSON.stringify([issueBrowse.acl, issueBrowse.unresolved, issueBrowse.issueGrants])).digest('hex').slice(0, 32);
      }
    } catch (err) {
      // The account may not read the grants: no issue carries a permission of its own from them, so each follows the
      // resource's verdict, whose capture fails the same way (and never widens).
      if (!(err instanceof ScopeError)) throw err;
      browseDigest = 'refused';
    }
    const fields = [...ISSUE_FIELDS, ...(issueBrowse?.issueGrants.userFields ?? [])];

    if (state.sweepStartedAt === null && (state.sweptAt === null || now - state.sweptAt >= sweepEvery)) {
      // A full re-read: every issue comes again with its current security level, so the levels tracked start over.
      Object.assign(state, { position: null, sweepStartedAt: now, levels: {} });
    }

    const tracked = Object.keys(state.levels);
    if (tracked.length > 0) {
      await levels.load();
      const changed = levels.refused ? [] : tracked.filter((id) => levels.digest(id) !== state.levels[id]);
      const current = changed.filter((id) => levels.digest(id) !== undefined);
      if (changed.length > current.length) {
        // A level left the scheme: the issues that had it changed level without Jira saying which; read them all.
        Object.assign(state, { position: null, sweepStartedAt: now, levels: {} });
      } else if (current.length > 0) {
        // Only who may see these issues changed: a permission event each, no content read again.
        const jqlOf = (after: string | null) => `project = "${key}" AND level in (${current.join(', ')})${after ? ` AND key > "${after}"` : ''} ORDER BY key ASC`;
        const guard = api.pages(`the issues of changed security levels of project ${key}`);
        for (let after: string | null = null; ; guard.next(after ?? '')) {
          api.checkAborted();
          const page: Version3Models.SearchAndReconcileResults = await api.call(`reading the issues of changed security levels of project ${key}`, (c) => c.issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql: jqlOf(after), maxResults: 100, fields: ['security', 'reporter', 'assignee', ...(issueBrowse?.issueGrants.userFields ?? [])] }), true);
          const issues = (page.issues ?? []) as SearchedIssue[];
          for (const issue of issues) {
            const levelId = issue.fields.security?.id;
            if (levelId) yield { kind: 'permission', id: issue.id, permission: levels.permission(levelId, issue) };
          }
          if (page.nextPageToken === undefined || issues.length === 0) break;
          after = issues[issues.length - 1].key;
        }
        for (const id of current) state.levels[id] = levels.digest(id)!;
        yield checkpoint();
      }
    }

    if (state.position !== null && (state.browse ?? 'none') !== browseDigest) {
      // Who may browse changed and some issues carry it in their own permission: a permission event for every issue.
      const guard = api.pages(`the issues of project ${key} whose browse access changed`);
      for (let after: string | null = null; ; guard.next(after ?? '')) {
        api.checkAborted();
        const jql: string = `project = "${key}"${after ? ` AND key > "${after}"` : ''} ORDER BY key ASC`;
        const page: Version3Models.SearchAndReconcileResults = await api.call(`reading the issues of project ${key} whose browse access changed`, (c) => c.issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql, maxResults: 100, fields: ['security', 'reporter', 'assignee', ...(issueBrowse?.issueGrants.userFields ?? [])] }), true);
        const issues = (page.issues ?? []) as SearchedIssue[];
        for (const issue of issues) {
          const levelId = issue.fields.security?.id;
          if (levelId) {
            await levels.load();
            if (!levels.refused) yield { kind: 'permission', id: issue.id, permission: levels.permission(levelId, issue) };
          } else {
            yield { kind: 'permission', id: issue.id, permission: (issueBrowse && issueBrowsePermission(issueBrowse, issue)) ?? { status: 'captured', acl: null } };
          }
        }
        if (page.nextPageToken === undefined || issues.length === 0) break;
        after = issues[issues.length - 1].key;
      }
      state.browse = browseDigest;
      yield checkpoint();
    }
    state.browse = browseDigest;

    // Every issue version taken in this sync, beside those the cursor remembers: a query that reaches further back than
    // the position remembers (where the zone's offset changes) finds them again, and skips them.
    const taken = new Set<string>();
    const guard = api.pages(`the issues of project ${key}`);

    let token: string | undefined;
    for (let first = true; ; first = false) {
      api.checkAborted();
      const position: CrawlPosition | null = state.position;
      const seen = new Set([...(position?.seen ?? []).map(([id, at]) => `${id}@${at}`), ...taken]);
      const jql = `project = "${key}"${position ? ` AND updated >= "${jqlLowerBound(position.minute, timeZone)}"` : ''} ORDER BY updated ASC, key ASC`;
      // A query again from the position follows an issue taken, so it is a new place unless Jira did not move on.
      if (!first) guard.next(token ?? `${jql} after ${taken.size}`);
      const page = await this.search(api, key, jql, fields, Math.min(100, pageSize + seen.size), token);
      const issues = (page.issues ?? []) as SearchedIssue[];
      const fresh = issues.filter((i) => !seen.has(`${i.id}@${epochOf(i.fields.updated)}`));
      const more = page.nextPageToken !== undefined && issues.length > 0;
      if (fresh.length === 0 && more) {
        // A whole page of issues already taken: go on within the same query.
        token = page.nextPageToken;
        continue;
      }
      token = undefined;
      for (const issue of fresh) {
        yield* await this.issueEvents(api, issue, levels, issueBrowse, state);
        const updated = epochOf(issue.fields.updated);
        taken.add(`${issue.id}@${updated}`);
        if (Number.isFinite(updated)) state.position = advance(state.position, issue.id, updated);
      }
      if (!more) break;
      yield checkpoint();
    }
    if (state.sweepStartedAt !== null) Object.assign(state, { sweptAt: state.sweepStartedAt, sweepStartedAt: null });
    yield checkpoint();
  }

  private search(api: JiraApi, key: string, jql: string, fields: string[], maxResults: number, nextPageToken: string | undefined): Promise<Version3Models.SearchAndReconcileResults> {
    return api.call(`reading the issues of project ${key}`, (c) => c.issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql, maxResults, fields, ...(nextPageToken ? { nextPageToken } : {}) }), true);
  }

  /**
   * One issue as events: an upsert with all its comments and, when it has a security level, the level's members as
   * its permission; without one, when browse access also goes to people the issue names, the project's list and them. When the account may not read who may see the level, the issue is deleted from the service and
   * reported as a failure (the status shows it), since it cannot be shown only to those Jira shows it to.
   */
  private async issueEvents(api: JiraApi, issue: SearchedIssue, levels: SecurityLevels, issueBrowse: BrowseAccess | null, state: JiraSyncState): Promise<SyncEvent[]> {
    const levelId = issue.fields.security?.id;
    let permission = issueBrowse ? issueBrowsePermission(issueBrowse, issue) : undefined;
    if (levelId) {
      await levels.load();
      if (levels.refused) {
        const error = new DocumentError(`Issue ${issue.key} has a security level, and the account may not read who may see it (${levels.refused.message}); it is left out until the account may.`);
        return [{ kind: 'delete', id: issue.id }, { kind: 'failure', id: issue.id, error }];
      }
      permission = levels.permission(levelId, issue);
      const digest = levels.digest(levelId);
      if (digest) state.levels[levelId] = digest;
    }
    const comments = await this.comments(api, issue);
    // Deleted between the search and its comments: gone, as the next listing would say.
    if (comments === null) return [{ kind: 'delete', id: issue.id }];
    return [{ kind: 'upsert', doc: issueDocument(issue, comments, api.site.baseUrl, permission) }];
  }

  /**
   * The comments a search carried, and the rest from /issue/{id}/comment when the search carried only some; null when
   * the issue no longer exists.
   */
  private async comments(api: JiraApi, issue: SearchedIssue): Promise<Version3Models.Comment[] | null> {
    const field = issue.fields.comment;
    const shown = field?.comments ?? [];
    if (!field || (field.total ?? shown.length) <= shown.length) return shown;
    const all: Version3Models.Comment[] = [];
    const guard = api.pages(`the comments of issue ${issue.key}`);
    for (let startAt = 0; ; guard.next(startAt)) {
      api.checkAborted();
      let page: Version3Models.PageOfComments;
      try {
        page = await api.call(`reading the comments of issue ${issue.key}`, (c) => c.issueComments.getComments({ issueIdOrKey: issue.id, startAt, maxResults: 100, orderBy: 'created' }));
      } catch (err) {
        if (err instanceof ProviderError && err.cause instanceof HttpException && err.cause.status === 404) return null;
        throw err;
      }
      const comments = page.comments ?? [];
      all.push(...comments);
      startAt += comments.length;
      if (comments.length === 0 || startAt >= (page.total ?? 0)) return all;
    }
  }
}

/** A resource is a project, by key. */
function projectKeyOf(resource: ResourceConfig): string {
  const key = resource.resourceId.trim();
  if (!PROJECT_KEY.test(key)) throw new ConfigurationError(`The resource_id '${resource.resourceId}' is not a Jira project key (letters, digits and _, starting with a letter, such as OPS).`);
  return key.toUpperCase();
}

function optionNumber(resource: ResourceConfig, name: string, byDefault: number, min: number, max: number): number {
  const raw = resource.options?.[name];
  if (raw === undefined || raw === null) return byDefault;
  const value = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ConfigurationError(`The resource option ${name} must be a number from ${min} to ${max} (it is ${JSON.stringify(raw)}).`);
  }
  return value;
}
