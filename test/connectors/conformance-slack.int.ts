import type { ConnectorProvider, ExistingDocument, ProviderContext, ResourceConfig, SyncCursor, SyncEvent } from '@crs/connectors/provider.port';
import type { SlackProvider } from '@crs/connectors/providers/slack/slack.provider';
import * as tokens from '@crs/platform/tokens';
import type { RunningFake } from '../fakes/loopback-server';
import { SlackFake } from '../fakes/slack/slack-fake';
import { connectorConformance } from './conformance';
import { HARRY, slackProviderFor } from './slack-fixture';

/**
 * The conformance suite against the Slack provider and the fake Slack Web API: one public channel whose messages are
 * the suite's documents, synced in pages of two.
 *
 * The suite names its documents (`d0`, `f3`, …) and finds their items by those names, while a Slack message's id is
 * the `ts` Slack gives it. The provider registered here is the real one behind a table from the suite's names to the
 * messages' ts and back (`NamedMessages`); everything else, the calls to the fake included, is the provider's own.
 *
 * Skipped: the per-document permission case. Slack has no permission per message: who may read a message is who may
 * read its channel, which is the resource-level verdict (slack.provider.int.ts proves its changes end to end).
 */
const CHANNEL = 'C0CONFORM1';
/** The Retry-After the fake sends when the suite asks for a rate limit. */
const RETRY_AFTER_S = 600;

class NamedMessages implements ConnectorProvider {
  constructor(
    private readonly inner: SlackProvider,
    private readonly tsOf: ReadonlyMap<string, string>,
  ) {}

  get description() {
    return this.inner.description;
  }

  private name(ts: string): string {
    for (const [name, t] of this.tsOf) if (t === ts) return name;
    return ts;
  }

  private named(event: SyncEvent): SyncEvent {
    switch (event.kind) {
      case 'upsert':
        return { kind: 'upsert', doc: { ...event.doc, id: this.name(event.doc.id) } };
      case 'delete':
      case 'failure':
      case 'permission':
        return { ...event, id: this.name(event.id) };
      case 'checkpoint':
        return event;
    }
  }

  validateCredentials(ctx: ProviderContext) {
    return this.inner.validateCredentials(ctx);
  }

  discoverResources(ctx: ProviderContext) {
    return this.inner.discoverResources(ctx);
  }

  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    for await (const e of this.inner.sync(ctx, resource, cursor)) yield this.named(e);
  }

  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    for await (const d of this.inner.listExistingIds(ctx, resource)) yield { ...d, id: this.name(d.id) };
  }

  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    for await (const e of this.inner.fetchDocuments(ctx, resource, ids.map((id) => this.tsOf.get(id) ?? id))) yield this.named(e);
  }

  capturePermissions(ctx: ProviderContext, resource: ResourceConfig) {
    return this.inner.capturePermissions(ctx, resource);
  }
}

connectorConformance('slack provider', () => {
  const fake = new SlackFake();
  const tsOf = new Map<string, string>();
  let server: RunningFake;
  // The provider's clock: Retry-After is relative, the suite's retryAt absolute on its own clock.
  let providerNow = Date.now();
  // Messages get increasing ts within the last hour, so every sync's look-back window covers them.
  let next = Math.floor(Date.now() / 1000) - 3600;
  const nextTs = () => `${next++}.000100`;
  const exists = (ts: string) => fake.messagesOf(CHANNEL).some((m) => m.ts === ts);

  return {
    providerId: 'slack',
    resource: { resourceId: CHANNEL, resourceType: 'channel', name: 'conformance', options: { page_size: 2 } },
    credentials: { bot_token: fake.token },
    async setUp(t) {
      fake.addChannel({ id: CHANNEL, name: 'conformance', is_private: false, created: next }, [HARRY]);
      server = await fake.start();
      const provider = slackProviderFor(server, { clock: () => new Date(providerNow) });
      t.get(tokens.CONNECTOR_PROVIDERS).register(new NamedMessages(provider, tsOf));
    },
    async tearDown() {
      await fake.stop();
    },
    async put(id, text) {
      const ts = tsOf.get(id);
      if (ts !== undefined && exists(ts)) {
        fake.editMessage(CHANNEL, ts, text, { user: HARRY, ts: nextTs() });
        return;
      }
      const posted = nextTs();
      tsOf.set(id, posted);
      fake.postMessage(CHANNEL, { ts: posted, user: HARRY, text });
    },
    async remove(id) {
      const ts = tsOf.get(id);
      if (ts !== undefined) fake.deleteMessage(CHANNEL, ts);
    },
    async revokeCredentials() {
      fake.switches.revokeToken(fake.token);
    },
    async restoreCredentials() {
      fake.switches.restoreToken(fake.token);
    },
    rateLimit(retryAt: Date, afterCalls: number) {
      providerNow = retryAt.getTime() - RETRY_AFTER_S * 1000;
      fake.switches.afterRequests(afterCalls, () => fake.switches.rateLimitNext(1, RETRY_AFTER_S));
    },
  };
});
