import type { DomainEvent } from '../domain-event';
import { DomainError } from '../errors';
import type { WebhookEvent } from './webhook.events';

/** One indexing webhook per organization (stream `webhooks-<orgId>`). */
export interface WebhookState {
  registered: boolean;
  url: string | null;
  eventTypes: string[];
  secretId: string | null;
}

export type WebhookCommand =
  | { type: 'Register'; url: string; eventTypes: string[]; secret?: { secretId: string; generated: boolean } }
  | { type: 'Delete' }
  | { type: 'SetSecret'; secretId: string; generated: boolean }
  | { type: 'RemoveSecret' };

export const initialWebhook = (): WebhookState => ({ registered: false, url: null, eventTypes: [], secretId: null });

/** Folds the stream; an event of another family leaves the state as it is. */
export function evolveWebhook(state: WebhookState, event: DomainEvent): WebhookState {
  switch (event.type) {
    case 'WebhookRegistered':
      return { ...state, registered: true, url: event.data.url, eventTypes: event.data.eventTypes };
    case 'WebhookDeleted':
      return initialWebhook();
    case 'SigningSecretSet':
      return { ...state, secretId: event.data.secretId };
    case 'SigningSecretRemoved':
      return { ...state, secretId: null };
    default:
      // Every WebhookEvent is handled above (this fails to compile when one is not).
      event satisfies Exclude<DomainEvent, WebhookEvent>;
      return state;
  }
}

export const webhookNotRegistered = () => new DomainError('not_found', 'WEBHOOK_NOT_REGISTERED', 'no indexing webhook is registered for this organization; POST /webhooks/indexing first');

/**
 * Registering again replaces URL and event types and never touches signing unless a secret comes with it;
 * deleting the registration forgets its secret too.
 */
export function decideWebhook(command: WebhookCommand, state: WebhookState): WebhookEvent[] {
  switch (command.type) {
    case 'Register': {
      const events: WebhookEvent[] = [{ type: 'WebhookRegistered', data: { url: command.url, eventTypes: command.eventTypes, replaced: state.registered } }];
      if (command.secret) events.push({ type: 'SigningSecretSet', data: command.secret });
      return events;
    }
    case 'Delete':
      return state.registered ? [{ type: 'WebhookDeleted', data: { url: state.url! } }] : [];
    case 'SetSecret':
      if (!state.registered) throw webhookNotRegistered();
      return [{ type: 'SigningSecretSet', data: { secretId: command.secretId, generated: command.generated } }];
    case 'RemoveSecret':
      if (!state.registered) throw webhookNotRegistered();
      return state.secretId ? [{ type: 'SigningSecretRemoved', data: { secretId: state.secretId } }] : [];
    default: {
      const never: never = command;
      return never;
    }
  }
}
