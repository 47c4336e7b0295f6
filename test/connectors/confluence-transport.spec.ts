import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigurationError, TargetForbiddenError, TransientError } from '@crs/connectors/provider-errors';
import { ConfluenceProvider, type ConfluenceProviderOptions } from '@crs/connectors/providers/confluence/confluence.provider';

/**
 * What every request of the Confluence provider goes through: axios' http adapter over public-only agents (a name that
 * resolves to a private address when the socket connects is refused), no redirect followed, no proxy from the
 * environment, a deadline and a byte limit. Plain loopback servers stand in for the wiki and for where a redirect or a
 * proxy would lead.
 */

const CURRENT_USER = { type: 'known', accountId: 'crs-connector', accountType: 'atlassian', email: 'crs@example.test', publicName: 'CRS', displayName: 'CRS connector' };

interface Server {
  url: string;
  port: number;
  /** every request's method and URL as it arrived */
  reached: string[];
  close(): Promise<void>;
}

async function serve(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Server> {
  const reached: string[] = [];
  const server = http.createServer((req, res) => {
    reached.push(`${req.method} ${req.url}`);
    handle(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    reached,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const json = (res: http.ServerResponse, body: unknown) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
};

const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
const credentials = (baseUrl: string) => ({ credentials: { base_url: baseUrl, email: 'crs@example.test', api_token: 'ATATT-token' } });
const provider = (options: ConfluenceProviderOptions = {}) => new ConfluenceProvider({ allowPrivateNetworks: true, retryDelaysMs: [], ...options });

describe('Confluence transport', () => {
  let wiki: Server;
  let elsewhere: Server;
  let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void;

  beforeEach(async () => {
    answer = (_req, res) => json(res, CURRENT_USER);
    wiki = await serve((req, res) => answer(req, res));
    elsewhere = await serve((_req, res) => json(res, CURRENT_USER));
  });

  afterEach(async () => {
    await wiki.close();
    await elsewhere.close();
  });

  it('checks the address again as it connects: a name public when checked and loopback when connecting is refused', async () => {
    let calls = 0;
    const rebinding = async () => (calls++ === 0 ? [{ address: '104.192.141.1', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const strict = provider({ allowPrivateNetworks: false, lookup: rebinding });
    const err = await caught(strict.validateCredentials(credentials(`https://wiki.example.test:${wiki.port}/wiki`)));
    expect(err).toBeInstanceOf(TargetForbiddenError);
    expect((err as Error).message).toBe(
      `Confluence at wiki.example.test:${wiki.port}/wiki resolves to an address that is not on the public internet (wiki.example.test resolves to 127.0.0.1, which is not a public address); connectors may not connect to this service's own network.`,
    );
    expect(calls).toBe(2);
    expect(wiki.reached).toEqual([]);
  });

  it('follows no redirect: a ConfigurationError naming where it pointed, and nothing is sent there', async () => {
    answer = (_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', `${elsewhere.url}/wiki/rest/api/user/current`);
      res.end();
    };
    const err = await caught(provider().validateCredentials(credentials(`${wiki.url}/wiki`)));
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toBe(`Confluence at 127.0.0.1:${wiki.port}/wiki redirected GET /wiki/rest/api/user/current to ${elsewhere.url}/wiki/rest/api/user/current; redirects are not followed, set base_url to the wiki's final address.`);
    expect(wiki.reached).toEqual(['GET /wiki/rest/api/user/current']);
    expect(elsewhere.reached).toEqual([]);
  });

  it('uses no proxy from the environment, whose address no agent would check', async () => {
    const saved = { http_proxy: process.env.http_proxy, HTTP_PROXY: process.env.HTTP_PROXY, no_proxy: process.env.no_proxy, NO_PROXY: process.env.NO_PROXY };
    process.env.http_proxy = elsewhere.url;
    process.env.HTTP_PROXY = elsewhere.url;
    delete process.env.no_proxy;
    delete process.env.NO_PROXY;
    try {
      expect((await provider().validateCredentials(credentials(`${wiki.url}/wiki`))).displayName).toBe(`CRS connector on 127.0.0.1:${wiki.port}/wiki`);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(wiki.reached).toEqual(['GET /wiki/rest/api/user/current']);
    expect(elsewhere.reached).toEqual([]);
  });

  it('reads no answer past the byte limit: a ConfigurationError, not retried', async () => {
    answer = (_req, res) => json(res, { ...CURRENT_USER, displayName: 'x'.repeat(5000) });
    const err = await caught(provider({ maxResponseBytes: 4096, retryDelaysMs: [1, 1] }).validateCredentials(credentials(`${wiki.url}/wiki`)));
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toBe(`Confluence at 127.0.0.1:${wiki.port}/wiki answered GET /wiki/rest/api/user/current with more than 4096 bytes, more than the connector reads of one answer; lower the resource's page_size.`);
    expect(wiki.reached).toEqual(['GET /wiki/rest/api/user/current']);
  });

  it('gives up on an answer that does not come within the deadline: retried, then a TransientError', async () => {
    answer = () => undefined;
    const err = await caught(provider({ requestTimeoutMs: 200, retryDelaysMs: [1] }).validateCredentials(credentials(`${wiki.url}/wiki`)));
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toMatch(/^Confluence at 127\.0\.0\.1:\d+\/wiki could not be reached \(timeout of 200ms exceeded\)\. The sync is tried again later\.$/);
    expect(wiki.reached).toEqual(['GET /wiki/rest/api/user/current', 'GET /wiki/rest/api/user/current']);
  });
});
