import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { DomainError, invalid } from '@crs/domain/errors';
import type { MetadataField } from '@crs/domain/metadata-schema';
import type { AppConfig } from '@crs/config';
import { APP_CONFIG } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { keyReaches } from '../database-directory';
import { DatabaseStreams } from '../database-streams';

/** Create a database named `name` (already checked against the naming rule) with this metadata schema. */
export class CreateDatabase extends Command<{ databaseId: string }> {
  constructor(
    readonly caller: Caller,
    readonly name: string,
    readonly metadataSchema: MetadataField[],
    /** The embedding dimension the client expects, when it sent one (original SDK's `embeddings_dimension`). */
    readonly embeddingsDimension?: number,
  ) {
    super();
  }
}

/**
 * A key limited to some databases may create only those; a client's expected embedding dimension must match the
 * configured embedder. Appends DatabaseCreated on the organization's registry (409 when the name is taken); the
 * worker then provisions the database and its four readiness flags turn true.
 */
@CommandHandler(CreateDatabase)
export class CreateDatabaseHandler implements ICommandHandler<CreateDatabase> {
  constructor(private readonly streams: DatabaseStreams, @Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async execute({ caller, name, metadataSchema, embeddingsDimension }: CreateDatabase): Promise<{ databaseId: string }> {
    if (!keyReaches(caller.key, name)) {
      throw new DomainError('forbidden', 'FORBIDDEN', `this API key is limited to its listed databases and cannot create '${name}'`);
    }
    const embedder = this.config.embedder;
    if (embeddingsDimension !== undefined && embeddingsDimension !== embedder.dimensions) {
      throw invalid(`embeddings_dimension ${embeddingsDimension} does not match the configured embedder ${embedder.modelId} (${embedder.dimensions} dimensions)`);
    }
    const databaseId = randomUUID();
    await this.streams.onRegistry(caller.ctx, { type: 'CreateDatabase', databaseId, name, metadataSchema, embedder });
    return { databaseId };
  }
}
