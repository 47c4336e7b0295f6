import { isDeepStrictEqual } from 'node:util';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { normalizeDocumentAcl } from '@crs/domain/acl';
import { decideItem } from '@crs/domain/items/item.decider';
import type { Store } from '@crs/domain/items/item.events';
import { parseAdditionalMetadata, parseMetadataObject, parseMetadataString } from '@crs/domain/items/item-input';
import { validateMetadata } from '@crs/domain/metadata-schema';
import type { AppConfig } from '@crs/config';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { decideOnItem } from '@crs/eventstore/item-stream';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import type { ItemRow } from '@crs/projections/items/items.queries';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { findItem } from '../item-view';

/** The fields of an edit as sent; `acl` is present (a key) only when the client sent it. */
export interface MetadataEdit {
  metadata?: unknown;
  additionalMetadata?: unknown;
  title?: string | null;
  acl?: { value: unknown };
}

/** Edit one item's metadata, additional metadata, title or ACL; answers the item as stored afterwards. */
export class UpdateItemMetadata extends Command<ItemRow> {
  constructor(
    readonly caller: Caller,
    readonly database: string,
    readonly collection: string,
    readonly itemId: string,
    readonly store: Store | undefined,
    readonly edit: MetadataEdit,
  ) {
    super();
  }
}

/**
 * A field whose value is the stored one changes nothing and is left out: an edit that changes nothing appends nothing
 * and answers the item as it is (the ACL is compared on the item's stream, in the decider). An edit waits until the
 * items read model (the authoritative check, so a revocation can never leak) and the search index (which pre-filters,
 * so a grant or a new metadata value is found too) show it.
 */
@CommandHandler(UpdateItemMetadata)
export class UpdateItemMetadataHandler implements ICommandHandler<UpdateItemMetadata> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    private readonly directory: DatabaseDirectory,
  ) {}

  async execute({ caller, database, collection, itemId, store, edit }: UpdateItemMetadata): Promise<ItemRow> {
    const db = await this.directory.resolve(caller.key, database);
    const item = await findItem(this.ds, db.id, collection, itemId, store);
    const changed = <T>(value: T | undefined, stored: unknown): T | undefined => (value === undefined || isDeepStrictEqual(value, stored) ? undefined : value);
    let metadata: Record<string, unknown> | undefined;
    if (edit.metadata !== undefined) {
      metadata = typeof edit.metadata === 'string' ? parseMetadataString(edit.metadata, 'metadata') : parseMetadataObject(edit.metadata, 'metadata');
      validateMetadata(db.metadataSchema, metadata, 'metadata');
      metadata = changed({ ...item.metadata, ...metadata }, item.metadata);
    }
    const additionalMetadata =
      edit.additionalMetadata !== undefined ? changed({ ...item.additional_metadata, ...parseAdditionalMetadata(edit.additionalMetadata, 'additional_metadata') }, item.additional_metadata) : undefined;
    const title = changed(edit.title, item.title);
    // acl: absent = untouched; a list replaces exactly; [] or null revokes (stored as __private__).
    const acl = edit.acl ? normalizeDocumentAcl(edit.acl.value, true, 'acl') : undefined;
    if (metadata === undefined && additionalMetadata === undefined && title === undefined && acl === undefined) return item;

    const ids = { databaseId: db.id, itemKey: item.item_key, itemId: item.item_id, collection: item.collection, store: item.store };
    const position = await decideOnItem(this.store, caller.ctx, db.id, item.item_key, (state) => decideItem({ type: 'UpdateMetadata', ids, metadata, additionalMetadata, title, acl }, state));
    if (position === null) return item;
    await this.runner.waitFor(position, ['items', 'search-index'], this.config.projectionWaitMs);
    return findItem(this.ds, db.id, collection, itemId, item.store);
  }
}
