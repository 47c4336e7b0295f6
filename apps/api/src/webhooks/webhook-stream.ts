import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@crs/config';
import { streams } from '@crs/domain/streams';
import { decideWebhook, evolveWebhook, initialWebhook, type WebhookCommand, type WebhookState } from '@crs/domain/webhooks/webhook.decider';
import type { WebhookEvent } from '@crs/domain/webhooks/webhook.events';
import { handleCommand, type CommandContext, type CommandOutcome } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, EVENT_STORE, PROJECTION_RUNNER, SIGNING_SECRET_VAULT } from '@crs/platform/tokens';
import type { SigningSecretVault } from '@crs/webhooks/signing-secret-vault';

/**
 * The organization's webhook stream (registration and signing secret). Loads the stream, runs the pure decider,
 * appends with the expected revision and waits until the outbox read model shows the result. Secrets go to the
 * encrypted vault, never to the log: a new one is sealed before the event that makes it current (and dropped again
 * when the append fails); the older ones are deleted once the read model shows the new state. Every handler that
 * changes the registration or its secret decides through here.
 */
@Injectable()
export class WebhookStream {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SIGNING_SECRET_VAULT) private readonly vault: SigningSecretVault,
  ) {}

  /** Decides on the stream; returns the registration's state after the decision. */
  async decide(ctx: CommandContext, command: WebhookCommand, newSecret?: { id: string; value: string }): Promise<WebhookState> {
    if (newSecret) await this.vault.put(ctx.orgId, newSecret.id, newSecret.value);
    let before = initialWebhook();
    let out: CommandOutcome<WebhookEvent>;
    try {
      out = await handleCommand<WebhookState, WebhookEvent, WebhookCommand>(
        this.store,
        streams.webhook(ctx.orgId),
        { initial: initialWebhook, evolve: evolveWebhook },
        (c, state) => {
          before = state;
          return decideWebhook(c, state);
        },
        command,
        ctx,
      );
    } catch (err) {
      if (newSecret) await this.vault.delete(ctx.orgId, newSecret.id).catch(() => undefined);
      throw err;
    }
    if (out.position !== null) await this.runner.waitFor(out.position, ['webhook-outbox'], this.config.projectionWaitMs);
    if (newSecret) await this.vault.deleteExcept(ctx.orgId, newSecret.id);
    return out.events.reduce(evolveWebhook, before);
  }

  /** Deletes every signing secret of the organization (after the registration or its secret was removed). */
  async deleteSecrets(orgId: string): Promise<void> {
    await this.vault.deleteExcept(orgId, null);
  }
}
