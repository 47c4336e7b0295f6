import { randomUUID } from 'node:crypto';
import { Inject, Logger } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DomainError } from '@crs/domain/errors';
import type { FeedbackRecorded } from '@crs/domain/feedback/feedback.events';
import type { NormalizedFeedback } from '@crs/domain/feedback/feedback-input';
import { streams } from '@crs/domain/streams';
import { metadataFor } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ApiKeyRecord } from '@crs/persistence/api-keys';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import type { RateLimiter } from '@crs/persistence/rate-limiter';
import type { AppConfig } from '@crs/config';
import { DatabaseDirectory, keyReaches, type DatabaseRecord } from '../../databases/database-directory';
import type { Caller } from '../../use-case/caller';
import { RateLimitedError } from '../../http/errors';
import { APP_CONFIG, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER, RATE_LIMITER } from '@crs/platform/tokens';
import { findRecordedQuery } from '@crs/projections/queries/queries.queries';

export interface FeedbackResponse {
  feedback_id: string;
  request_id: string;
  recorded: boolean;
  created_at: string;
  message: string;
  linked: boolean;
}

interface QueryLink {
  linked: boolean;
  queryDatabaseId: string | null;
  reason: 'linked' | 'unknown' | 'other_database';
}

/** Record one feedback submission about a query that already ran, optionally scoped to a database and collection. */
export class SubmitFeedback extends Command<FeedbackResponse> {
  constructor(
    readonly caller: Caller,
    /** The database named by the request (not yet resolved), or null. */
    readonly database: string | null,
    readonly collection: string | null,
    readonly feedback: NormalizedFeedback,
  ) {
    super();
  }
}

/**
 * Records one feedback submission: the database the key reaches, rate limit (per organization), link to the
 * recorded query, one FeedbackRecorded event in its own stream. The append is the only write: when it fails nothing
 * was recorded and the client gets 500, so a retry cannot create a duplicate.
 */
@CommandHandler(SubmitFeedback)
export class SubmitFeedbackHandler implements ICommandHandler<SubmitFeedback> {
  private readonly logger = new Logger('feedback');

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(RATE_LIMITER) private readonly rateLimiter: RateLimiter,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly directory: DatabaseDirectory,
  ) {}

  async execute({ caller, database, collection, feedback: input }: SubmitFeedback): Promise<FeedbackResponse> {
    const { key: auth, ctx } = caller;
    const db = database ? await this.directory.resolve(auth, database) : null;
    const { rateLimit, rateWindowSeconds } = this.config.feedback;
    const decision = await this.rateLimiter.consume(auth.orgId, 'feedback', rateLimit, rateWindowSeconds);
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, `feedback submissions (${rateLimit} per ${rateWindowSeconds} seconds per organization)`);

    const link = await this.link(auth, input.requestId, db);
    const feedbackId = randomUUID();
    const data: FeedbackRecorded['data'] = {
      feedbackId,
      requestId: input.requestId,
      databaseId: db?.id ?? null,
      databaseName: db?.name ?? null,
      collection,
      feedback: input.feedback,
      rating: input.rating,
      source: input.source,
      groundTruth: input.groundTruth,
      metadata: input.metadata,
      linked: link.linked,
      queryDatabaseId: link.queryDatabaseId,
    };
    const metadata = metadataFor({ ...ctx, databaseId: db?.id ?? link.queryDatabaseId ?? undefined });
    let position: number;
    try {
      ({ position } = await this.store.append(streams.feedback(feedbackId), [{ type: 'FeedbackRecorded', data, metadata }], { expectedRevision: 'no_stream' }));
    } catch (err) {
      this.logger.error(`feedback for request ${input.requestId} could not be stored: ${(err as Error).message}`);
      throw new DomainError('internal', 'FEEDBACK_NOT_RECORDED', 'Feedback could not be stored; nothing was recorded, so retrying cannot create a duplicate');
    }
    await this.runner.waitFor(position, ['feedback'], this.config.projectionWaitMs);
    return {
      feedback_id: feedbackId,
      request_id: input.requestId,
      recorded: true,
      created_at: metadata.occurredAt,
      linked: link.linked,
      message:
        link.reason === 'linked'
          ? `Feedback recorded for query ${input.requestId}`
          : link.reason === 'other_database'
            ? `Feedback recorded, but query ${input.requestId} ran on another database than '${db!.name}': it is stored unlinked`
            : `Feedback recorded, but no query with request_id ${input.requestId} is known to this service: it is stored unlinked and left out of evaluations`,
    };
  }

  /** The recorded query with this request id, if this key can see it (its organization, a database it reaches). */
  private async link(auth: ApiKeyRecord, requestId: string, db: DatabaseRecord | null): Promise<QueryLink> {
    let found = await this.findQuery(auth, requestId);
    if (!found) {
      // The query may have been recorded an instant ago: let the queries read model catch up once.
      await this.runner.waitFor(await this.store.headPosition(), ['queries'], this.config.projectionWaitMs);
      found = await this.findQuery(auth, requestId);
    }
    if (!found) return { linked: false, queryDatabaseId: null, reason: 'unknown' };
    if (db && db.id !== found.databaseId) return { linked: false, queryDatabaseId: null, reason: 'other_database' };
    return { linked: true, queryDatabaseId: found.databaseId, reason: 'linked' };
  }

  private async findQuery(auth: ApiKeyRecord, requestId: string): Promise<{ databaseId: string } | null> {
    const rows = await findRecordedQuery(this.ds, requestId, auth.orgId);
    const row = rows.find((r) => keyReaches(auth, r.name));
    return row ? { databaseId: row.database_id } : null;
  }
}
