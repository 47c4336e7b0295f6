import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderContext, SyncEvent, SyncedDocument } from '@crs/connectors/provider.port';
import { SlackProvider, type SlackProviderOptions } from '@crs/connectors/providers/slack/slack.provider';
import { DEFAULT_DATA_DIR } from '../../bench/quality/datasets';
import type { RunningFake } from '../fakes/loopback-server';
import { SlackFake } from '../fakes/slack/slack-fake';

/**
 * The Slack provider's tests share this: the real export (two public channels, 158 messages, four people) served by
 * the fake, with the emails the workspace reveals for two of the four people, and the provider pointed at the fake.
 */
export const EXPORT_ZIP = join(DEFAULT_DATA_DIR, 'slack-export-sample/testarchive.zip');
if (!existsSync(EXPORT_ZIP)) throw new Error(`Slack export not found at ${EXPORT_ZIP}: the Slack provider's tests sync it`);

export const TEAM = 'T0BMHLSRH';
export const WORKSPACE_GROUP = 'group:slack:t0bmhlsrh';
export const ENRIQUE = 'C0JGLMMNX';
export const SAILOR = 'C0JL6CGQ2';
/** The export's people: two whose emails the workspace shows, two whose it hides. */
export const HARRY = 'U0BMYT2FL';
export const HERMIONE = 'U0BMS113R';
export const HAMZA = 'U0BMQB6JE';
export const HANNIBAL = 'U0BMM2FEH';
export const EMAILS = { [HARRY]: 'harry@example.test', [HERMIONE]: 'hermione@example.test' };
/** The app's own bot user, a member of every channel it reads. */
export const BOT_USER = 'UCRSBOT01';

/** Retries fast enough for tests: the point is whether the provider retries, not how long it waits. */
export const FAST_RETRIES = { retries: 2, factor: 1, minTimeout: 5, maxTimeout: 5 };

export async function startSlackFake(): Promise<{ fake: SlackFake; server: RunningFake }> {
  const fake = new SlackFake();
  await fake.loadExport(EXPORT_ZIP, EMAILS);
  fake.addUser({ id: BOT_USER, name: 'crs-bot', is_bot: true, deleted: false, profile: { real_name: 'crs-bot' } });
  const server = await fake.start();
  return { fake, server };
}

export function slackProviderFor(server: RunningFake, options: Omit<SlackProviderOptions, 'apiUrl'> = {}): SlackProvider {
  return new SlackProvider({ apiUrl: `${server.url}/api/`, allowPrivateNetworks: true, retryConfig: FAST_RETRIES, ...options });
}

export const contextFor = (fake: SlackFake): ProviderContext => ({ credentials: { bot_token: fake.token } });

export async function drain<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of events) out.push(e);
  return out;
}

export const upserts = (events: SyncEvent[]): SyncedDocument[] => events.flatMap((e) => (e.kind === 'upsert' ? [e.doc] : []));
export const checkpoints = (events: SyncEvent[]): string[] => events.flatMap((e) => (e.kind === 'checkpoint' ? [e.cursor] : []));
export const lastCursor = (events: SyncEvent[]): string => {
  const all = checkpoints(events);
  if (!all.length) throw new Error('the sync yielded no checkpoint');
  return all[all.length - 1];
};
