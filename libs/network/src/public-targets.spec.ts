import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { isPublicAddress } from './address-policy';
import { PrivateTargetError, privateTargetReason, publicOnlyLookup, publicOnlySocket } from './public-targets';

describe('public targets', () => {
  it('classifies loopback, private, link-local, mapped and reserved addresses as not public', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::ffff:127.0.0.1', 'fe80::1', 'fd00::1', '2001:db8::1', 'not-an-ip']) {
      expect({ a, public: isPublicAddress(a) }).toEqual({ a, public: false });
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect({ a, public: isPublicAddress(a) }).toEqual({ a, public: true });
  });

  it('gives the reason a host is not public, resolving names (every address counts)', async () => {
    expect(await privateTargetReason('127.0.0.1')).toMatch(/127\.0\.0\.1 is a private, loopback/);
    expect(await privateTargetReason('/var/run/postgresql')).toMatch(/this machine/);
    expect(await privateTargetReason('db.example.com', { lookup: async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }] })).toMatch(/resolves to 10\.0\.0\.5/);
    expect(await privateTargetReason('db.example.com', { lookup: async () => [{ address: '93.184.216.34', family: 4 }] })).toBeNull();
    expect(await privateTargetReason('8.8.8.8')).toBeNull();
  });

  it('the connect-time lookup refuses a name that resolves to a private address and passes a public one', async () => {
    const answer = (addresses: string[]) => publicOnlyLookup(async () => addresses.map((address) => ({ address, family: 4 })));
    const call = (lookup: ReturnType<typeof publicOnlyLookup>, all: boolean) =>
      new Promise<{ err: unknown; value: unknown }>((resolve) => (lookup as any)('db.example.com', { all }, (err: unknown, value: unknown) => resolve({ err, value })));
    expect((await call(answer(['10.0.0.5']), false)).err).toBeInstanceOf(PrivateTargetError);
    expect(await call(answer(['93.184.216.34']), false)).toEqual({ err: null, value: '93.184.216.34' });
    expect(await call(answer(['93.184.216.34']), true)).toEqual({ err: null, value: [{ address: '93.184.216.34', family: 4 }] });
  });

  describe('a socket that connects to public addresses only', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((s) => s.end());
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => server.close());

    it('refuses a loopback address and a name that resolves to one, where a plain socket connects', async () => {
      for (const host of ['127.0.0.1', 'localhost']) {
        const socket = publicOnlySocket();
        socket.connect(port, host);
        const [err] = await once(socket, 'error').catch((e) => [e]);
        expect(err).toBeInstanceOf(PrivateTargetError);
      }
      const unix = publicOnlySocket();
      unix.connect('/tmp/.s.PGSQL.5432');
      const [err] = await once(unix, 'error').catch((e) => [e]);
      expect(err).toBeInstanceOf(PrivateTargetError);
    });
  });
});
