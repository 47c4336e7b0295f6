import { isIP, Socket, type LookupFunction } from 'node:net';
import { isPublicAddress, type LookupFn, resolveWithin, systemLookup } from './address-policy';

/**
 * Outbound connections that may reach the public internet only: the check before a connection is tried (to refuse a
 * target with a message a person understands) and the check at connect time (a name may resolve elsewhere by then).
 */

/** A target that is not on the public internet. */
export class PrivateTargetError extends Error {
  readonly code = 'PRIVATE_TARGET';
}

/**
 * Why `host` is not on the public internet, or null when every address it resolves to is public. A Unix socket
 * directory (a host starting with `/`) and an empty host are this machine. A name that does not resolve now is not
 * refused here (the connection fails on its own, and the connect-time check covers it if it resolves later).
 */
export async function privateTargetReason(host: string, opts: { lookup?: LookupFn; timeoutMs?: number } = {}): Promise<string | null> {
  const name = host.replace(/^\[|\]$/g, '');
  if (name === '' || name.startsWith('/')) return `${host || 'an empty host'} is a connection on this machine`;
  if (isIP(name)) return isPublicAddress(name) ? null : `${name} is a private, loopback, link-local or reserved address`;
  let addresses: string[];
  try {
    addresses = (await resolveWithin(opts.lookup ?? systemLookup, name, opts.timeoutMs ?? 5000)).map((a) => a.address);
  } catch {
    return null;
  }
  const bad = addresses.find((a) => !isPublicAddress(a));
  return bad ? `${name} resolves to ${bad}, a private, loopback, link-local or reserved address` : null;
}

/**
 * A `lookup` for `net.connect` that resolves as usual and fails when any address the name resolves to is not public:
 * the socket then connects to an address that was checked, so a DNS answer that changes between a check and the
 * connection (rebinding) cannot redirect it.
 */
export function publicOnlyLookup(lookup: LookupFn = systemLookup): LookupFunction {
  return ((hostname: string, options: { all?: boolean } | number, callback: (...args: unknown[]) => void) => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    lookup(hostname).then(
      (addresses) => {
        const bad = addresses.find((a) => !isPublicAddress(a.address));
        if (bad) return callback(new PrivateTargetError(`${hostname} resolves to ${bad.address}, which is not a public address`));
        if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
        if (all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err) => callback(err),
    );
  }) as LookupFunction;
}

/**
 * A TCP socket whose `connect(port, host)` reaches public addresses only: a literal address is checked as given, a
 * name through `publicOnlyLookup`, and a Unix socket path is refused. For clients that take a socket to connect
 * (`pg`'s `stream` option); a refusal is the socket's `error`, a PrivateTargetError.
 */
export function publicOnlySocket(lookup?: LookupFn): Socket {
  const socket = new Socket();
  const connect = socket.connect.bind(socket) as (...args: unknown[]) => Socket;
  const refuse = (message: string) => {
    process.nextTick(() => socket.destroy(new PrivateTargetError(message)));
    return socket;
  };
  (socket as unknown as { connect: (...args: unknown[]) => Socket }).connect = (...args: unknown[]) => {
    const [first, second] = args;
    if (typeof first === 'object' && first !== null) {
      const o = first as { path?: string; port?: number; host?: string };
      if (o.path !== undefined) return refuse(`${o.path} is a connection on this machine`);
      return connectTo(Number(o.port), o.host ?? 'localhost', args.slice(1));
    }
    if (typeof second !== 'string' && (typeof first !== 'number' && !/^\d+$/.test(String(first)))) return refuse(`${String(first)} is a connection on this machine`);
    return connectTo(Number(first), typeof second === 'string' ? second : 'localhost', args.slice(2));
  };
  function connectTo(port: number, host: string, rest: unknown[]): Socket {
    const name = host.replace(/^\[|\]$/g, '');
    if (isIP(name)) {
      if (!isPublicAddress(name)) return refuse(`${name} is a private, loopback, link-local or reserved address`);
      return connect({ port, host: name }, ...rest);
    }
    return connect({ port, host: name, lookup: publicOnlyLookup(lookup) }, ...rest);
  }
  return socket;
}
