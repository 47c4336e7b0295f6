import { isDeepStrictEqual } from 'node:util';
import { Body, Controller, Inject, Param, Patch, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { normalizeDocumentAcl } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import { decideItem } from '@crs/domain/items/item.decider';
import { parseAdditionalMetadata, parseMetadataString } from '@crs/domain/items/item-input';
import { validateMetadata } from '@crs/domain/metadata-schema';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { decideOnItem } from '@crs/eventstore/item-stream';
import { authOf } from '../../http/auth.hook';
import { commandContext } from '../../http/command-context';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { APP_CONFIG, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import { DatabaseDirectory } from '../../databases/database-directory';
import type { AppConfig } from '@crs/config';
import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { findItem, itemView, parseStoreType } from '../item-view';

const FIELDS = new Set(['database', 'tenant_id', 'collection', 'sub_tenant_id', 'type', 'metadata', 'additional_metadata', 'title', 'acl']);
/** What selects the item: in the query string (as on the other item endpoints) or in the body. */
const QUERY_FIELDS = new Set(['database', 'tenant_id', 'collection', 'sub_tenant_id', 'type']);

@ApiTags('context')
@Controller()
export class UpdateMetadataController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    private readonly directory: DatabaseDirectory,
  ) {}

  @Patch('context/:id/metadata')
  @ApiOperation({
    summary:
      'Edit an item: metadata (schema fields), additional_metadata, title, acl. Only the fields sent change; acl: a list replaces the stored ACL exactly, [] or null revokes. `database`, `collection` (default collection when omitted) and `type` select the item, in the query string or the body. A body that changes nothing answers the item as it is.',
  })
  async update(@Req() req: FastifyRequest, @Param('id') id: string, @Query() query: Record<string, unknown>, @Body() body: Record<string, unknown> | undefined) {
    if (typeof (body ?? {}) !== 'object' || Array.isArray(body)) throw invalid('body must be a JSON object');
    for (const k of Object.keys(body ?? {})) if (!FIELDS.has(k)) throw invalid(`${k} is not an editable field (metadata, additional_metadata, title, acl)`);
    for (const k of Object.keys(query ?? {})) if (!QUERY_FIELDS.has(k)) throw invalid(`${k} is not a parameter of this endpoint (database, collection, type)`);
    // One target: a selector given in both places with different values is refused.
    const input = scopeFromBodyAndQuery(body ?? {}, query) as Record<string, unknown>;
    const ctx = contextOf(req);
    const scope = readScope(ctx, input, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const item = await findItem(this.ds, db.id, collection, id, parseStoreType(input.type));

    // A field whose value is the stored one changes nothing and is left out: a body that changes nothing appends
    // nothing and answers the item as it is (the ACL is compared on the item's stream, in the decider).
    const changed = <T>(value: T | undefined, stored: unknown): T | undefined => (value === undefined || isDeepStrictEqual(value, stored) ? undefined : value);
    let metadata: Record<string, unknown> | undefined;
    if (input.metadata !== undefined) {
      metadata = typeof input.metadata === 'string' ? parseMetadataString(input.metadata, 'metadata') : (parseAdditionalMetadata(input.metadata, 'metadata') as Record<string, unknown>);
      validateMetadata(db.metadataSchema, metadata, 'metadata');
      metadata = changed({ ...item.metadata, ...metadata }, item.metadata);
    }
    const additionalMetadata =
      input.additional_metadata !== undefined ? changed({ ...item.additional_metadata, ...parseAdditionalMetadata(input.additional_metadata, 'additional_metadata') }, item.additional_metadata) : undefined;
    if (input.title !== undefined && input.title !== null && typeof input.title !== 'string') throw invalid('title must be a string');
    const title = changed(input.title as string | null | undefined, item.title);
    // acl: key absent = untouched; a list replaces exactly; [] or null revokes (stored as __private__).
    const acl = 'acl' in input ? normalizeDocumentAcl(input.acl, true, 'acl') : undefined;

    const ids = { databaseId: db.id, itemKey: item.item_key, itemId: item.item_id, collection: item.collection, store: item.store };
    const position =
      metadata === undefined && additionalMetadata === undefined && title === undefined && acl === undefined
        ? null
        : await decideOnItem(this.store, commandContext(req), db.id, item.item_key, (state) => decideItem({ type: 'UpdateMetadata', ids, metadata, additionalMetadata, title, acl }, state));
    // Visible to the very next request: the read model (authoritative check, so a revocation can never leak)
    // and the search index (which pre-filters, so a grant or a new metadata value is found too).
    if (position !== null) await this.runner.waitFor(position, ['items', 'search-index'], this.config.projectionWaitMs);
    ctx.scope.collection = collection;
    echoSourceType(ctx, [item]);
    return itemView(await findItem(this.ds, db.id, collection, id, item.store));
  }
}
