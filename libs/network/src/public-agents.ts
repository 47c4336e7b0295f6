import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isPublicAddress, type LookupFn } from './address-policy';
import { PrivateTargetError, publicOnlyLookup } from './public-targets';

type ConnectCallback = (err: Error | null, socket: Duplex) => void;
type ConnectOptions = { host?: string | null; hostname?: string | null; lookup?: unknown };

/**
 * The check every connection of a public-only agent makes before it connects: a literal address must be public (a
 * name is checked by `publicOnlyLookup` as the socket resolves it, so a DNS answer that changes between an earlier
 * check and the connection cannot redirect it). Returns the options to connect with, or the refusal.
 */
function guarded(options: ConnectOptions, lookup: LookupFn | undefined): { options: ConnectOptions } | { refusal: PrivateTargetError } {
  const host = String(options.host ?? options.hostname ?? '').replace(/^\[|\]$/g, '');
  if (host === '' || host.startsWith('/')) return { refusal: new PrivateTargetError(`${host || 'an empty host'} is a connection on this machine`) };
  if (isIP(host)) return isPublicAddress(host) ? { options } : { refusal: new PrivateTargetError(`${host} is a private, loopback, link-local or reserved address`) };
  return { options: { ...options, lookup: publicOnlyLookup(lookup) } };
}

function refuse(err: PrivateTargetError, callback: ConnectCallback | undefined): Socket | undefined {
  if (callback) {
    process.nextTick(() => callback(err, undefined as unknown as Duplex));
    return undefined;
  }
  throw err;
}

/**
 * HTTP and HTTPS agents whose every connection reaches public addresses only (docs/connectors.md, "Private networks
 * (SSRF)"): for clients that take an agent (axios `httpAgent` / `httpsAgent`, `node:http` requests), so a
 * user-given host, a redirect or a name that resolves elsewhere later can never reach the service's own network. A
 * refused connection fails its request with a PrivateTargetError. The agents keep connections alive; `destroy` them
 * when done.
 */
export function publicOnlyAgents(opts: { lookup?: LookupFn; keepAlive?: boolean; maxSockets?: number } = {}): { httpAgent: http.Agent; httpsAgent: https.Agent } {
  const settings = { keepAlive: opts.keepAlive ?? true, ...(opts.maxSockets ? { maxSockets: opts.maxSockets } : {}) };
  class PublicHttpAgent extends http.Agent {
    override createConnection(options: ConnectOptions, callback?: ConnectCallback): Duplex {
      const checked = guarded(options, opts.lookup);
      if ('refusal' in checked) return refuse(checked.refusal, callback) as unknown as Duplex;
      return (http.Agent.prototype as unknown as { createConnection: (o: unknown, cb?: ConnectCallback) => Duplex }).createConnection.call(this, checked.options, callback);
    }
  }
  class PublicHttpsAgent extends https.Agent {
    override createConnection(options: ConnectOptions, callback?: ConnectCallback): Duplex {
      const checked = guarded(options, opts.lookup);
      if ('refusal' in checked) return refuse(checked.refusal, callback) as unknown as Duplex;
      return (https.Agent.prototype as unknown as { createConnection: (o: unknown, cb?: ConnectCallback) => Duplex }).createConnection.call(this, checked.options, callback);
    }
  }
  return { httpAgent: new PublicHttpAgent(settings), httpsAgent: new PublicHttpsAgent(settings) };
}
