import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { handleCommand, type CommandContext, type CommandOutcome } from '@crs/eventstore/command-handling';
import {
  decideDatabase,
  decideRegistry,
  evolveDatabase,
  evolveRegistry,
  initialDatabase,
  initialRegistry,
  type DatabaseCommand,
  type DatabaseState,
  type RegistryCommand,
  type RegistryState,
} from '@crs/domain/database.decider';
import type { DatabaseEvent } from '@crs/domain/events';
import { streams } from '@crs/domain/streams';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import type { AppConfig } from '@crs/config';

/**
 * The streams of databases: the organization's registry (names, creation, deletion requests) and each database's own
 * stream (collections, provisioning). Loads the stream, runs the pure decider, appends with the expected revision and
 * waits until the databases read model shows the result (read your writes). Every handler that changes a database
 * decides through here.
 */
@Injectable()
export class DatabaseStreams {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Decides on the organization's registry stream. */
  async onRegistry(ctx: CommandContext, command: RegistryCommand): Promise<CommandOutcome<DatabaseEvent>> {
    const out = await handleCommand<RegistryState, DatabaseEvent, RegistryCommand>(
      this.store,
      streams.orgDatabases(ctx.orgId),
      { initial: initialRegistry, evolve: evolveRegistry },
      decideRegistry,
      command,
      ctx,
    );
    await this.waitForReadModel(out.position);
    return out;
  }

  /** Decides on one database's stream; returns the log position of the append (null when nothing was appended). */
  async onDatabase(ctx: CommandContext, databaseId: string, command: DatabaseCommand): Promise<number | null> {
    const out = await handleCommand<DatabaseState, DatabaseEvent, DatabaseCommand>(
      this.store,
      streams.database(databaseId),
      { initial: initialDatabase, evolve: evolveDatabase },
      decideDatabase,
      command,
      { ...ctx, databaseId },
    );
    await this.waitForReadModel(out.position);
    return out.position;
  }

  private async waitForReadModel(position: number | null): Promise<void> {
    if (position !== null) await this.runner.waitFor(position, ['databases'], this.config.projectionWaitMs);
  }
}
