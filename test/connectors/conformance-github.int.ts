import { GitHubProvider } from '@crs/connectors/providers/github/github.provider';
import * as tokens from '@crs/platform/tokens';
import type { RunningFake } from '../fakes/loopback-server';
import { GitHubFake } from '../fakes/github/github-fake';
import { connectorConformance } from './conformance';

/**
 * The conformance suite against the GitHub provider, with the GitHub fake as the source: a public repository whose
 * root files are the documents (`paths: ["*"]`, two per page), issues and pull requests left out so each document is
 * one file. GitHub has no per-document permission (a repository's visibility and collaborators are resource-level),
 * so the permission-only case is skipped.
 */
const REPOSITORY = 'octokit-fixture-org/hello-world';
const fake = new GitHubFake();
let server: RunningFake;

/**
 * The API calls behind the three provider calls the suite lets through before throttling (permissions, listing, the
 * crawl's first page), which share the sync's context and so one read of the repository: the capture reads the
 * repository; the listing its tree; the first page the branch head, the two trees it compares and two blobs.
 */
const CALLS_BEFORE_SECOND_PAGE = 1 + 1 + 5;

connectorConformance('github provider', () => ({
  providerId: 'github',
  resource: { resourceId: REPOSITORY, resourceType: 'repository', name: REPOSITORY, options: { paths: ['*'], include_issues: false, include_pull_requests: false, page_size: 2 } },
  credentials: { token: fake.token },
  async setUp(t) {
    fake.loadOctokitFixtures();
    fake.writeFile(REPOSITORY, 'README.md', null);
    server = await fake.start();
    t.get(tokens.CONNECTOR_PROVIDERS).register(new GitHubProvider({ apiUrl: server.url, allowPrivateNetworks: true, retryBaseMs: 5 }));
  },
  async tearDown() {
    await fake.stop();
  },
  async put(id, text) {
    fake.writeFile(REPOSITORY, id, text);
  },
  async remove(id) {
    fake.writeFile(REPOSITORY, id, null);
  },
  async revokeCredentials() {
    fake.refuseToken(fake.token);
  },
  async restoreCredentials() {
    fake.acceptToken(fake.token);
  },
  rateLimit(retryAt: Date, afterCalls: number) {
    // An exhausted quota (403, x-ratelimit-remaining 0, the reset at retryAt) on the first call of the second page.
    if (afterCalls !== 3) throw new Error(`the GitHub source maps the suite's three calls before throttling, not ${afterCalls}`);
    fake.rateLimitStyle = 'primary';
    fake.rateLimitResetAt = retryAt;
    fake.switches.afterRequests(CALLS_BEFORE_SECOND_PAGE, () => fake.switches.rateLimitNext(1, 60));
  },
}));
