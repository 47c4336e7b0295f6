import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { handleCommand, type CommandContext } from '@crs/eventstore/command-handling';
import {
  decideDatabase,
  decideRegistry,
  evolveDatabase,
  evolveRegistry,
  initialDatabase,
  initialRegistry,
  type DatabaseCommand,
  type RegistryCommand,
} from '@crs/domain/database.decider';
import type { DatabaseEvent, EmbedderSpec } from '@crs/domain/events';
import type { MetadataField } from '@crs/domain/metadata-schema';
import { streams } from '@crs/domain/streams';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import type { AppConfig } from '@crs/config';

/** Appends database lifecycle events and waits until the databases read model shows them (read your writes). */
@Injectable()
export class DatabaseCommands {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(ctx: CommandContext, name: string, metadataSchema: MetadataField[], embedder: EmbedderSpec): Promise<{ databaseId: string }> {
    const databaseId = randomUUID();
    const command: RegistryCommand = { type: 'CreateDatabase', databaseId, name, metadataSchema, embedder };
    const out = await this.registry(ctx, command);
    return { databaseId: (out.events[0] as any).data.databaseId };
  }

  async requestDeletion(ctx: CommandContext, name: string): Promise<void> {
    await this.registry(ctx, { type: 'RequestDatabaseDeletion', name });
  }

  async onDatabase(ctx: CommandContext, databaseId: string, command: DatabaseCommand): Promise<number | null> {
    const out = await handleCommand<ReturnType<typeof initialDatabase>, DatabaseEvent, DatabaseCommand>(
      this.store,
      streams.database(databaseId),
      { initial: initialDatabase, evolve: evolveDatabase },
      decideDatabase,
      command,
      { ...ctx, databaseId },
    );
    if (out.position !== null) await this.runner.waitFor(out.position, ['databases'], this.config.projectionWaitMs);
    return out.position;
  }

  private async registry(ctx: CommandContext, command: RegistryCommand) {
    const out = await handleCommand<ReturnType<typeof initialRegistry>, DatabaseEvent, RegistryCommand>(
      this.store,
      streams.orgDatabases(ctx.orgId),
      { initial: initialRegistry, evolve: evolveRegistry },
      decideRegistry,
      command,
      ctx,
    );
    if (out.position !== null) await this.runner.waitFor(out.position, ['databases'], this.config.projectionWaitMs);
    return out;
  }
}
