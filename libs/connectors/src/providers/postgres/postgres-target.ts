import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { Client } from 'pg';
import { ConfigurationError } from '../../provider-errors';
import type { Credentials } from '../../provider.port';

/** Where a connection string leads, resolved as `pg` resolves it (environment defaults included). */
export interface PostgresTarget {
  connectionString: string;
  host: string;
  port: number;
  database: string;
  user: string;
}

export function targetOf(connectionString: string): PostgresTarget {
  const client = new Client({ connectionString });
  return {
    connectionString,
    host: client.host,
    port: client.port,
    database: client.database ?? '',
    user: client.user ?? '',
  };
}

/** The connector's credentials: one `connection_string` in URL form. */
export function targetFromCredentials(credentials: Credentials): PostgresTarget {
  const raw = credentials.connection_string;
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new ConfigurationError('The credentials need a connection_string: postgres://user:password@host:5432/database.');
  }
  const connectionString = raw.trim();
  if (!/^postgres(ql)?:\/\//i.test(connectionString)) {
    throw new ConfigurationError('The connection_string must be a URL of the form postgres://user:password@host:5432/database.');
  }
  let target: PostgresTarget;
  try {
    target = targetOf(connectionString);
  } catch (err) {
    throw new ConfigurationError(`The connection_string cannot be read as a Postgres URL: ${(err as Error).message}`, { cause: err });
  }
  if (!target.database) throw new ConfigurationError('The connection_string names no database: add it after the host, as in postgres://user:password@host:5432/database.');
  return target;
}

const LOCAL = 'this machine';

/**
 * The addresses a host name stands for, with every address of this machine (loopback, its interfaces, a Unix socket
 * directory) folded into one, since a server listening here answers on all of them.
 */
async function addressesOf(host: string): Promise<Set<string>> {
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) own.add(i.address.toLowerCase());
  const local = (a: string) => a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.') || own.has(a);
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === '' || name.startsWith('/')) return new Set([LOCAL]);
  let addresses: string[];
  try {
    addresses = (await lookup(name, { all: true })).map((a) => a.address.toLowerCase());
  } catch {
    addresses = [name];
  }
  return new Set(addresses.map((a) => (local(a) ? LOCAL : a)));
}

export async function sameDatabase(a: PostgresTarget, b: PostgresTarget): Promise<boolean> {
  if (a.port !== b.port || a.database !== b.database) return false;
  const [x, y] = await Promise.all([addressesOf(a.host), addressesOf(b.host)]);
  for (const address of x) if (y.has(address)) return true;
  return false;
}

/**
 * Refuses a connection string that leads to one of the service's own databases: a connector reading the service's
 * own tables would ingest its event log and keys as documents. Host names are compared by the addresses they resolve
 * to, so `localhost`, `127.0.0.1` and this machine's own address are the same server.
 */
export async function refuseOwnDatabase(target: PostgresTarget, own: readonly PostgresTarget[]): Promise<void> {
  for (const o of own) {
    if (await sameDatabase(target, o)) {
      throw new ConfigurationError(
        `The connection_string points at this service's own database (${target.database} on ${target.host}:${target.port}); a connector may only read another database.`,
      );
    }
  }
}
