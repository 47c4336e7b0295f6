/**
 * Webhook events.
 *
 * Streams (streams.ts):
 *   webhooks-<orgId>        WebhookRegistered, WebhookDeleted, SigningSecretSet, SigningSecretRemoved
 *   delivery-<deliveryId>   DeliveryAttempted, DeliveryRetryRequested
 *
 * Secrets never enter the log: SigningSecretSet carries only the id of the encrypted secret kept outside
 * the log (table webhook_secrets), and whether it was generated or supplied.
 */
export const INDEXING_STATUS_CHANGED = 'indexing.status_changed';
export const WEBHOOK_EVENT_TYPES = [INDEXING_STATUS_CHANGED] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Indexing statuses that fire `indexing.status_changed` (`success` is the legacy alias of `completed`). */
export const TERMINAL_INDEXING_STATUSES = ['completed', 'errored', 'success'] as const;

/** Whether an item status event sends `indexing.status_changed`: a terminal status of an item a client ingested. */
export function notifiesWebhook(status: { status: string; derived?: true }): boolean {
  return (TERMINAL_INDEXING_STATUSES as readonly string[]).includes(status.status) && !status.derived;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'permanently_failed';
/** `sweeping` is not stored: it is a pending or failed record whose dispatcher lease is live. */
export type VisibleDeliveryStatus = DeliveryStatus | 'sweeping';
export const DELIVERY_STATUSES: readonly VisibleDeliveryStatus[] = ['pending', 'sweeping', 'delivered', 'failed', 'permanently_failed'];

export interface WebhookRegistered {
  type: 'WebhookRegistered';
  data: { url: string; eventTypes: string[]; replaced: boolean };
}
export interface WebhookDeleted {
  type: 'WebhookDeleted';
  data: { url: string };
}
export interface SigningSecretSet {
  type: 'SigningSecretSet';
  data: { secretId: string; generated: boolean };
}
export interface SigningSecretRemoved {
  type: 'SigningSecretRemoved';
  data: { secretId: string };
}

export type WebhookEvent = WebhookRegistered | WebhookDeleted | SigningSecretSet | SigningSecretRemoved;

/** One send of one delivery, whatever its result; the resulting record state is decided here, not on replay. */
export interface DeliveryAttempted {
  type: 'DeliveryAttempted';
  data: {
    deliveryId: string;
    /** 1-based count of every attempt of this delivery */
    attempt: number;
    /** 1-based count since the record was (re)queued; the retry schedule follows it */
    roundAttempt: number;
    ok: boolean;
    statusCode: number | null;
    errorCode: string | null;
    errorMessage: string | null;
    durationMs: number;
    /** the record's state after this attempt */
    status: Exclude<DeliveryStatus, 'pending'>;
    /** when the next attempt is due (jitter already applied); null unless status is failed */
    nextAttemptAt: string | null;
  };
}

/** Manual retry (from failed or permanently_failed): back to pending with a fresh retry schedule. */
export interface DeliveryRetryRequested {
  type: 'DeliveryRetryRequested';
  data: { deliveryId: string; previousStatus: DeliveryStatus };
}

export type DeliveryEvent = DeliveryAttempted | DeliveryRetryRequested;
