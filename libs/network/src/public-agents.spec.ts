import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { publicOnlyAgents } from './public-agents';
import { PrivateTargetError } from './public-targets';

/** What a GET through the agent ends in: the status it answered, or the error. */
function get(url: string, agent: http.Agent): Promise<{ status?: number; err?: unknown }> {
  const lib = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    const req = lib.get(url, { agent }, (res) => {
      res.resume();
      resolve({ status: res.statusCode });
    });
    req.on('error', (err) => resolve({ err }));
  });
}

describe('public-only agents', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('reached'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it('refuses a literal loopback, private or link-local address, over http and https', async () => {
    const { httpAgent, httpsAgent } = publicOnlyAgents();
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::1]:${port}/`, 'http://169.254.169.254/latest/meta-data', `https://127.0.0.1:${port}/`, 'https://10.0.0.5/']) {
      const { err, status } = await get(url, url.startsWith('https:') ? httpsAgent : httpAgent);
      expect({ url, status, refused: err instanceof PrivateTargetError }).toEqual({ url, status: undefined, refused: true });
    }
    httpAgent.destroy();
    httpsAgent.destroy();
  });

  it('refuses a name that resolves to a private address when the socket connects', async () => {
    const { httpAgent } = publicOnlyAgents({ lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    const { err } = await get(`http://rebinding.example.com:${port}/`, httpAgent);
    expect(err).toBeInstanceOf(PrivateTargetError);
    httpAgent.destroy();
  });

  it('a plain agent reaches the same server: the refusal is the agent\'s doing', async () => {
    expect(await get(`http://127.0.0.1:${port}/`, new http.Agent())).toEqual({ status: 200 });
  });
});
