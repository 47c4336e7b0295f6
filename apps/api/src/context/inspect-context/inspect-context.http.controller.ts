import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { invalid, notFound } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { authOf } from '../../http/auth.hook';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { BLOB_STORE, DATA_SOURCE } from '@crs/platform/tokens';
import { DatabaseDirectory } from '../../databases/database-directory';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '@crs/persistence/blob-store';
import { findItem, parseStoreType } from '../item-view';
import { aclDigest, PRESIGNED_EXPIRY, PresignedUrls } from '../presigned-urls';

/** Largest content returned inline (larger items answer with size and type only). */
export const INSPECT_MAX_BYTES = 10 * 1024 * 1024;

@ApiTags('context')
@Controller()
export class InspectContextController {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly directory: DatabaseDirectory,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly presigned: PresignedUrls,
  ) {}

  @Get('context/inspect')
  @ApiOperation({
    summary: `Content of an item as ingested: ?database=&id=&collection=&type=&mode=content|url|both&expiry_seconds=&acl=... Text content in \`content\`, binary in \`content_base64\`. mode url or both: \`presigned_url\`, a URL of this service that returns the content without an API key for expiry_seconds (${PRESIGNED_EXPIRY.min} to ${PRESIGNED_EXPIRY.max}, default ${PRESIGNED_EXPIRY.default}), and no longer once the item, its content or its ACL changes.`,
  })
  async inspect(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    for (const k of Object.keys(query)) if (!['database', 'tenant_id', 'collection', 'sub_tenant_id', 'id', 'type', 'mode', 'expiry_seconds', 'acl'].includes(k)) throw invalid(`${k} is not an inspect parameter`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, query, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    if (typeof query.id !== 'string' || !query.id) throw invalid('id is required');
    const mode = (query.mode ?? 'content') as string;
    if (!['content', 'url', 'both'].includes(mode)) throw invalid("mode must be 'content', 'url' or 'both'");
    const exp = mode === 'content' ? null : this.presigned.expiryOf(query.expiry_seconds);
    const auth = authOf(req);
    const db = await this.directory.resolve(auth, scope.database!);
    const item = await findItem(this.ds, db.id, collection, query.id, parseStoreType(query.type));
    const caller = callerPrincipals(query.acl === undefined ? undefined : Array.isArray(query.acl) ? query.acl : [query.acl]);
    if (!isVisible(item.acl, caller) || (item.expires_at && new Date(item.expires_at).getTime() <= Date.now())) throw notFound('ITEM_NOT_FOUND', `no item with id '${query.id}'`);
    echoSourceType(ctx, [item]);
    const size = Number(item.bytes);
    // Bound to this content version and ACL and to the asking key: a change of any of them revokes the URL.
    const presigned =
      exp === null
        ? null
        : this.presigned.url({ org: db.orgId, db: db.id, item: item.item_key, cv: item.content_version, acl: aclDigest(item.acl), key: auth.prefix, exp }, `${req.protocol}://${req.headers.host ?? 'localhost'}`);
    const base = {
      success: true,
      id: item.item_id,
      content_type: item.content_type,
      size_bytes: size,
      presigned_url: presigned,
      ...(exp === null ? {} : { presigned_url_expires_at: new Date(exp * 1000).toISOString() }),
      content: null as string | null,
      content_base64: null as string | null,
      error: null as string | null,
    };
    if (mode === 'url') return { ...base, message: 'presigned URL returned: it serves the content without an API key until it expires' };
    if (size > INSPECT_MAX_BYTES) return { ...base, message: `content is larger than ${INSPECT_MAX_BYTES} bytes; not returned inline${presigned ? ' (the presigned URL serves it)' : ''}` };
    const bytes = await this.blobs.get(db.id, item.content_sha256);
    const textual = item.pairs || /^text\/|json|csv|xml|markdown|html/.test(item.content_type);
    return textual ? { ...base, content: bytes.toString('utf8'), message: 'content returned' } : { ...base, content_base64: bytes.toString('base64'), message: 'binary content returned as base64' };
  }
}
