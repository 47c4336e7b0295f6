import type { ConnectorProvider } from '@crs/connectors/provider.port';
import { GitHubProvider } from '@crs/connectors/providers/github/github.provider';
import { GoogleDriveProvider } from '@crs/connectors/providers/google-drive/google-drive.provider';
import { SlackProvider } from '@crs/connectors/providers/slack/slack.provider';
import { ConfluenceFake } from '../../test/fakes/confluence/confluence-fake';
import { DriveFake } from '../../test/fakes/gdrive/gdrive-fake';
import { GitHubFake } from '../../test/fakes/github/github-fake';
import { JiraFake } from '../../test/fakes/jira/jira-fake';
import { SlackFake } from '../../test/fakes/slack/slack-fake';

/** The resource input of `POST /connectors/{id}/configure`. */
export interface ResourceInput {
  resource_id: string;
  resource_type: string;
  name: string;
  options?: Record<string, unknown>;
}

/**
 * What the fewest API calls of a sync of the unchanged resource would be under the provider's API (at the fake's page
 * caps, which follow the API's), what they are, and what the provider calls beyond them and why.
 */
export interface Minimum {
  calls: number;
  how: string;
  beyond: string;
}

/** One provider's fake, seeded with a resource of `docs` documents and listening on 127.0.0.1. */
export interface SeededSource {
  provider: string;
  /** The provider pointed at the fake, for the providers whose API origin is an operator setting, not a credential. */
  instance?: ConnectorProvider;
  credentials: Record<string, string>;
  resource: ResourceInput;
  /** `METHOD /path?query` of every request the fake answered so far, in order. */
  requests(): readonly string[];
  /** The endpoint a request counts under: its method and path with document ids folded, and its query's parameter names. */
  endpoint(request: string): string;
  minimum: Minimum;
  /** How the resource was seeded, for the report. */
  seeded: string;
  stop(): Promise<void>;
}

export type SourceName = 'slack' | 'github' | 'jira' | 'confluence' | 'google_drive';
export const SOURCE_NAMES: SourceName[] = ['slack', 'github', 'jira', 'confluence', 'google_drive'];

/** A line of text for document `i`: varied enough that chunks and vectors differ, the same on every run. */
export const documentText = (i: number): string =>
  `Note ${i} reports on topic ${i % 97} with a remark about region ${i % 13}, the figure ${(i * 7919) % 100003}, and follow-up item ${(i * 31) % 1009}.`;

/** Query parameters whose value is kept in an endpoint's name: the page size, which says how many calls a listing takes. */
const PAGE_SIZE_PARAMETERS = new Set(['limit', 'maxResults', 'per_page', 'pageSize']);

/**
 * `METHOD path?name&name=value`: the query's parameter names, sorted, with the value of a page-size parameter only
 * (cursors, tokens and page numbers vary per call); `fold` rewrites the path's ids.
 */
function endpointOf(request: string, fold: (path: string) => string = (p) => p): string {
  const [method, url] = request.split(' ', 2);
  const [path, query] = url.split('?', 2);
  const params = new URLSearchParams(query ?? '');
  const names = [...new Set(params.keys())].sort().map((n) => (PAGE_SIZE_PARAMETERS.has(n) ? `${n}=${params.get(n)}` : n));
  return `${method} ${fold(path)}${names.length ? `?${names.join('&')}` : ''}`;
}

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);

/** One public channel with `docs` top-level messages an hour apart, the newest an hour ago. */
async function slack(docs: number): Promise<SeededSource> {
  const fake = new SlackFake();
  const channel = 'C0BENCH001';
  const user = 'U0BENCH001';
  fake.addUser({ id: user, name: 'bench', deleted: false, profile: { real_name: 'Bench', email: 'bench@example.test' } });
  const newest = Math.floor(Date.now() / 1000) - 3600;
  const messages = Array.from({ length: docs }, (_, i) => ({ type: 'message', ts: `${newest - (docs - 1 - i) * 3600}.000100`, user, text: documentText(i) }));
  fake.addChannel({ id: channel, name: 'bench', is_private: false, created: newest - docs * 3600 }, [user], messages);
  const server = await fake.start();
  return {
    provider: 'slack',
    instance: new SlackProvider({ apiUrl: `${server.url}/api/`, allowPrivateNetworks: true }),
    credentials: { bot_token: fake.token },
    resource: { resource_id: channel, resource_type: 'channel', name: 'bench' },
    requests: () => fake.switches.requests,
    endpoint: (r) => endpointOf(r),
    minimum: {
      calls: 1 + ceilDiv(docs, 999),
      how: `conversations.info (the channel's visibility, for the permission) and conversations.history over the whole channel at 999 a page (${ceilDiv(docs, 999)} pages): Slack has no change feed, so only a full listing shows deletions, and it carries each message's text and edit mark, so it shows edits too`,
      beyond: `the crawl reads conversations.history again from the newest message it saw less the look-back window (7 days by default: ${Math.min(docs, 168)} messages here at one an hour, pages of 200), so edits and replies to recent messages are caught; the engine's full listing (999 a page, each message with a hash of what history says of it) would show those too`,
    },
    seeded: `one public channel, ${docs} top-level messages an hour apart (no threads), the newest an hour before the run; page_size and look_back_days at their defaults (200, 7 days)`,
    stop: () => fake.stop(),
  };
}

/** One public repository with `docs` issues, one in five a pull request, no files; created a minute apart in 2024. */
async function github(docs: number): Promise<SeededSource> {
  const fake = new GitHubFake();
  fake.loadOctokitFixtures();
  const repository = 'octokit-fixture-org/hello-world';
  fake.writeFile(repository, 'README.md', null);
  const start = Date.parse('2024-01-01T00:00:00Z');
  for (let i = 0; i < docs; i++) {
    const number = i + 1;
    const at = new Date(start + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const pull = number % 5 === 0;
    fake.addIssue(repository, {
      number, title: `Issue ${number}`, body: documentText(i), created_at: at, updated_at: at,
      ...(pull ? { pull_request: { url: `https://api.github.com/repos/${repository}/pulls/${number}`, html_url: `https://github.com/${repository}/pull/${number}`, diff_url: null, patch_url: null } } : {}),
    });
  }
  const server = await fake.start();
  return {
    provider: 'github',
    instance: new GitHubProvider({ apiUrl: server.url, allowPrivateNetworks: true }),
    credentials: { token: fake.token },
    resource: { resource_id: repository, resource_type: 'repository', name: repository },
    requests: () => fake.switches.requests,
    endpoint: (r) => endpointOf(r, (p) => p.replace(/\/git\/(trees|blobs)\/[^/]+$/, '/git/$1/{sha}').replace(/\/issues\/\d+/, '/issues/{number}')),
    minimum: {
      calls: 2 + ceilDiv(docs, 100),
      how: `repos.get once (visibility for the permission, the default branch), git.getRef of the default branch (an unchanged head means no tree or blob to read), and the issue listing with state=all at 100 a page (${ceilDiv(docs, 100)} pages): GitHub lists no deleted issue anywhere, so only a full listing shows deletions, and each entry's updated_at and comment count show edits, which makes a separate since= query redundant`,
      beyond: 'the recursive tree read by the engine\'s listing though the branch head did not move (the listing is not given the cursor that says it did not), and the crawl\'s since= issue query (one page, empty) beside the full listing',
    },
    seeded: `one public repository (the recorded octokit-fixture-org/hello-world, README removed) with ${docs} issues, every fifth a pull request, no comments, created and updated a minute apart in 2024; default options (README and docs/ files, issues and pull requests)`,
    stop: () => fake.stop(),
  };
}

/** One project anyone may browse, with `docs` issues created a minute apart in 2024. */
async function jira(docs: number): Promise<SeededSource> {
  const fake = new JiraFake();
  fake.addUser({ accountId: 'acc-bench', displayName: 'Bench', emailAddress: 'bench@example.test' });
  fake.addProject('BENCH', 'Bench', [{ type: 'anyone' }]);
  const start = Date.parse('2024-01-01T00:00:00Z');
  for (let i = 0; i < docs; i++) fake.addIssue('BENCH', `Issue ${i + 1}`, { at: new Date(start + i * 60_000).toISOString(), description: documentText(i), reporter: 'acc-bench' });
  const server = await fake.start();
  return {
    provider: 'jira',
    credentials: { base_url: server.url, email: fake.credentials.email, api_token: fake.credentials.apiToken },
    resource: { resource_id: 'BENCH', resource_type: 'project', name: 'Bench' },
    requests: () => fake.switches.requests,
    endpoint: (r) => endpointOf(r, (p) => p.replace(/\/issue\/[^/]+/, '/issue/{key}').replace(/\/project\/[^/]+/, '/project/{key}')),
    minimum: {
      calls: 1 + ceilDiv(docs, 100),
      how: `the project's permission scheme with its grants (one call when it names no role or group to expand), and a JQL search of the project's issue ids and updated times at the fake's 100 a page (${ceilDiv(docs, 100)} pages; Jira Cloud's /search/jql returns up to 5,000 a page when only ids are asked for): Jira lists no deleted issue, so only a full listing shows deletions, and its updated times show edits`,
      beyond: `/myself (the account's time zone, in which Jira reads the dates of the crawl's JQL) and the crawl's search for issues updated since the last sync (one page, empty) beside the listing. The listing asks for 5,000 ids a page, which Jira Cloud's enhanced search gives for id-only fields, but the fake caps every search at 100: against Jira Cloud the listing would take ${ceilDiv(docs, 5000)} call(s)`,
    },
    seeded: `one project (BENCH) anyone may browse, no security levels, ${docs} issues with a one-line description and no comments, created a minute apart in 2024; default options`,
    stop: () => fake.stop(),
  };
}

/** One space anonymous visitors may read, with `docs` pages at its root, modified a minute apart in 2024. */
async function confluence(docs: number): Promise<SeededSource> {
  const fake = new ConfluenceFake();
  fake.addUser({ accountId: 'acc-bench', displayName: 'Bench', email: 'bench@example.test' });
  fake.addSpace('BENCH', 'Bench', { anonymous: true });
  const start = Date.parse('2024-01-01T00:00:00Z');
  for (let i = 0; i < docs; i++) fake.addPage('BENCH', `Page ${i + 1}`, `<p>${documentText(i)}</p>`, null, new Date(start + i * 60_000).toISOString());
  const server = await fake.start();
  return {
    provider: 'confluence',
    credentials: { base_url: `${server.url}/wiki`, email: fake.credentials.email, api_token: fake.credentials.apiToken },
    resource: { resource_id: 'BENCH', resource_type: 'space', name: 'Bench' },
    requests: () => fake.switches.requests,
    endpoint: (r) => endpointOf(r, (p) => p.replace(/\/content\/\d+/, '/content/{id}').replace(/\/space\/[^/]+/, '/space/{key}')),
    minimum: {
      calls: 1 + ceilDiv(docs, 250),
      how: `the space's permissions (one call), and the space's pages with their versions and read restrictions at 250 a page (${ceilDiv(docs, 250)} pages, the fake's and the content API's cap): Confluence lists no deleted page, so only a full listing shows deletions, and the versions show edits`,
      beyond: '`user/current` (the account\'s time zone, in which Confluence reads the dates of the crawl\'s CQL) and the crawl\'s query for pages modified since the last sync less an overlap (one page; pages in the overlap come back unchanged); the engine\'s listing is also the restriction sweep, so the space is listed once',
    },
    seeded: `one space (BENCH) anonymous visitors may read, ${docs} pages at its root with a one-paragraph body and no restrictions, modified a minute apart in 2024; default options`,
    stop: () => fake.stop(),
  };
}

/** One My Drive folder with `docs` small text files and no grants of their own. */
async function googleDrive(docs: number): Promise<SeededSource> {
  const fake = new DriveFake();
  await fake.start();
  const folder = 'bench-folder';
  fake.addFile({ id: folder, name: 'Bench', mimeType: 'application/vnd.google-apps.folder', parents: [fake.myDriveRoot] });
  for (let i = 0; i < docs; i++) fake.addFile({ id: `bench-file-${i}`, name: `Note ${i}.txt`, mimeType: 'text/plain', parents: [folder] }, documentText(i));
  const key = fake.serviceAccountKey();
  return {
    provider: 'google_drive',
    instance: new GoogleDriveProvider({ apiUrl: fake.url, allowPrivateNetworks: true }),
    credentials: { service_account_key: key },
    resource: { resource_id: folder, resource_type: 'folder', name: 'Bench' },
    requests: () => fake.switches.requests,
    endpoint: (r) => endpointOf(r, (p) => p.replace(/\/files\/[^/]+/, '/files/{id}')),
    minimum: {
      calls: 2,
      how: 'a token exchange (an access token lasts an hour, the default sync interval) and changes.list from the saved page token (one call that answers no change and the next token): the changes feed names deleted, trashed, moved and re-shared files, so an unchanged resource needs no listing',
      beyond: `a token exchange for each of the engine's three provider calls (capture, listing, crawl: the access token is not kept between them), the folder's permissions for the resource-level capture, and the engine's listing of the folder (files.list, 1,000 a page: ${ceilDiv(docs, 1000)} calls) to find deletions, which the changes feed already reports`,
    },
    seeded: `one My Drive folder with ${docs} small text files (one line each), no grants of their own; default options`,
    stop: () => fake.stop(),
  };
}

export async function seedSource(name: SourceName, docs: number): Promise<SeededSource> {
  switch (name) {
    case 'slack':
      return slack(docs);
    case 'github':
      return github(docs);
    case 'jira':
      return jira(docs);
    case 'confluence':
      return confluence(docs);
    case 'google_drive':
      return googleDrive(docs);
  }
}
