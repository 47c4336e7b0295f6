import { Client, QueryResultRow } from 'pg';
import { PrivateTargetError, publicOnlySocket } from '@crs/network/public-targets';
import { ProviderError, TargetForbiddenError } from '../../provider-errors';
import { isConnectionLoss, toProviderError } from './postgres-errors';
import type { PostgresTarget } from './postgres-target';

export interface SessionSettings {
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  /** Pauses before each new connection after one was lost mid-sync; its length is the number of attempts. */
  reconnectDelaysMs: readonly number[];
  /** Connect to public addresses only, checked when the socket connects (PostgresProviderOptions.allowPrivateNetworks). */
  publicOnly: boolean;
}

/**
 * Settings every connector session runs with. Read-only by default; the text forms of dates, times and floats are
 * fixed, so a value read as text converts back to the same value (cursors) and hashes the same in every session.
 */
function sessionSql(statementTimeoutMs: number): string {
  return [
    'SET default_transaction_read_only = on',
    `SET statement_timeout = ${Math.max(0, Math.floor(statementTimeoutMs))}`,
    "SET idle_in_transaction_session_timeout = '60s'",
    "SET TimeZone = 'UTC'",
    "SET DateStyle = 'ISO, YMD'",
    "SET IntervalStyle = 'postgres'",
    'SET extra_float_digits = 1',
    "SET bytea_output = 'hex'",
  ].join('; ');
}

/**
 * One connection to a source database that only reads: the session defaults to read-only transactions and every
 * query runs inside `BEGIN TRANSACTION READ ONLY`, so not even a function a view calls can switch writing back on.
 * Errors come out as provider errors.
 */
export class ReadOnlySession {
  private constructor(
    private readonly client: Client,
    private readonly target: PostgresTarget,
  ) {}

  static async open(target: PostgresTarget, settings: Pick<SessionSettings, 'statementTimeoutMs' | 'connectTimeoutMs'> & { publicOnly?: boolean }): Promise<ReadOnlySession> {
    const client = new Client({
      connectionString: target.connectionString,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      application_name: 'crs-connector',
      keepAlive: true,
      // pg connects the socket it is given; this one checks the address it connects to (TLS runs over it).
      ...(settings.publicOnly ? { stream: () => publicOnlySocket() } : {}),
    });
    // A connection that dies while idle emits 'error'; with no listener that would end the process. The next query
    // fails on its own and is mapped there.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query(sessionSql(settings.statementTimeoutMs));
    } catch (err) {
      await client.end().catch(() => undefined);
      if (err instanceof PrivateTargetError) {
        throw new TargetForbiddenError(`The connection to ${target.host} was refused: ${err.message}; connectors may not connect to this service's own network.`, { cause: err });
      }
      throw toProviderError(err, target);
    }
    return new ReadOnlySession(client, target);
  }

  async query<R extends QueryResultRow>(sql: string, params: unknown[] = [], resourceId?: string): Promise<R[]> {
    try {
      await this.client.query('BEGIN TRANSACTION READ ONLY');
      try {
        const result = await this.client.query<R>(sql, params);
        await this.client.query('COMMIT');
        return result.rows;
      } catch (err) {
        await this.client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } catch (err) {
      throw toProviderError(err, this.target, resourceId);
    }
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/**
 * A session that reconnects when its connection is lost between or during queries (a server restart, an operator
 * ending the backend), then repeats the query. A refused login on reconnecting surfaces as the AuthError it is.
 */
export class ReconnectingSession {
  private session: ReadOnlySession | undefined;

  constructor(
    private readonly target: PostgresTarget,
    private readonly settings: SessionSettings,
  ) {}

  async query<R extends QueryResultRow>(sql: string, params: unknown[] = [], resourceId?: string): Promise<R[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.session ??= await ReadOnlySession.open(this.target, this.settings);
        return await this.session.query<R>(sql, params, resourceId);
      } catch (err) {
        if (!this.mayRetry(err, attempt)) throw err;
        await this.reset(attempt);
      }
    }
  }

  private mayRetry(err: unknown, attempt: number): boolean {
    return err instanceof ProviderError && isConnectionLoss(err.cause) && attempt < this.settings.reconnectDelaysMs.length;
  }

  private async reset(attempt: number): Promise<void> {
    await this.session?.close();
    this.session = undefined;
    await new Promise((r) => setTimeout(r, this.settings.reconnectDelaysMs[attempt]));
  }

  async close(): Promise<void> {
    await this.session?.close();
    this.session = undefined;
  }
}
