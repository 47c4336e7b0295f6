/**
 * The Postgres event log's notifications: one LISTEN connection per store, fanned out to every subscription, and
 * the payload the append function sends on each commit.
 */
import type { Notification, Pool, PoolClient } from 'pg';

/** Channel woken on every append; the payload describes the append (a hint only, see AppendNotice). */
export const EVENTS_NOTIFY_CHANNEL = 'crs_events';

/** What one append's NOTIFY says: its first and last log positions and its event types. */
export interface AppendNotice {
  first: number;
  last: number;
  types: string[];
}

/** Called with the notices gathered since the last call; undefined when one could not be read or the connection broke. */
export type NoticeListener = (notices: AppendNotice[] | undefined) => void;

/** How long notifications are gathered before subscriptions are woken. */
const NOTIFY_COALESCE_MS = 3;

/**
 * One LISTEN connection per store, shared by every subscription: a process runs a dozen subscriptions and must
 * not tie up a pool connection for each. A broken connection wakes everyone (they re-read, so nothing is missed)
 * and is re-established on the next wait.
 */
export class NotificationHub {
  private client: PoolClient | undefined;
  private connecting: Promise<boolean> | undefined;
  private readonly listeners = new Set<NoticeListener>();

  constructor(private readonly pool: Pool) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  add(listener: NoticeListener): () => Promise<void> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.release();
    };
  }

  /** Best effort: returns true when a new LISTEN was established (callers re-read at once). */
  ensure(): Promise<boolean> {
    if (this.client) return Promise.resolve(false);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<boolean> {
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      client.on('notification', this.onNotification);
      client.on('error', this.onError);
      await client.query(`LISTEN ${EVENTS_NOTIFY_CHANNEL}`);
      if (this.listeners.size === 0) {
        this.detach(client, false);
        return false;
      }
      this.client = client;
      return true;
    } catch {
      if (client) this.detach(client, true);
      return false;
    }
  }

  private pending: NodeJS.Timeout | undefined;
  /** What the notifications gathered so far said; undefined once one could not be read (an older writer's). */
  private notices: AppendNotice[] | undefined = [];

  /**
   * Notifications are coalesced for a few milliseconds: a burst of appends (an ingest of hundreds of items) wakes
   * each subscription once, for one page read, instead of once per event.
   */
  private readonly onNotification = (msg: Notification): void => {
    if (msg.channel !== EVENTS_NOTIFY_CHANNEL) return;
    const notice = parseNotice(msg.payload);
    if (notice && this.notices) this.notices.push(notice);
    else this.notices = undefined;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      const notices = this.notices;
      this.notices = [];
      for (const l of this.listeners) l(notices);
    }, NOTIFY_COALESCE_MS);
  };

  private readonly onError = (): void => {
    const broken = this.client;
    this.client = undefined;
    if (broken) this.detach(broken, true);
    for (const l of this.listeners) l(undefined);
  };

  async release(): Promise<void> {
    if (this.pending) clearTimeout(this.pending);
    this.pending = undefined;
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await client.query('UNLISTEN *');
      this.detach(client, false);
    } catch {
      this.detach(client, true);
    }
  }

  private detach(client: PoolClient, destroy: boolean): void {
    client.removeListener('notification', this.onNotification);
    client.removeListener('error', this.onError);
    try {
      client.release(destroy);
    } catch {
      // already released
    }
  }
}

/** `first:last:Type,Type`; anything else (an older writer sent only the last position) is unknown. */
function parseNotice(payload: string | undefined): AppendNotice | undefined {
  const m = /^(\d+):(\d+):(.*)$/.exec(payload ?? '');
  if (!m) return undefined;
  return { first: Number(m[1]), last: Number(m[2]), types: m[3] ? m[3].split(',') : [] };
}
