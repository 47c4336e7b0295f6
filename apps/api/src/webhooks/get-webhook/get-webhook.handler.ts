import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { findRegistration } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import type { Caller } from '../../use-case/caller';

export interface RegistrationView {
  registered: boolean;
  url: string | null;
  event_types: string[];
  signing_secret_configured: boolean;
}

/** The organization's current registration (never its signing secret). */
export class GetWebhook extends Query<RegistrationView> {
  constructor(readonly caller: Caller) {
    super();
  }
}

/**
 * A key limited to some databases sees the receiver's origin only (`https://host:port/…`): the webhook carries every
 * database's events, and receiver URLs often hold a token in their path or query (a chat app's incoming-webhook
 * URL is the credential itself).
 */
@QueryHandler(GetWebhook)
export class GetWebhookHandler implements IQueryHandler<GetWebhook> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async execute({ caller }: GetWebhook): Promise<RegistrationView> {
    const hook = await findRegistration(this.ds, caller.key.orgId);
    if (!hook) return { registered: false, url: null, event_types: [], signing_secret_configured: false };
    return {
      registered: true,
      url: caller.key.databases === null ? hook.url : originOnly(hook.url),
      event_types: hook.event_types,
      signing_secret_configured: hook.secret_id !== null,
    };
  }
}

/** `scheme://host[:port]/…`: where events go, without the path, query or credentials that may authorize it. */
function originOnly(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '…';
  }
}
