import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { notFound } from '@crs/domain/errors';
import { itemContent } from '@crs/projections/items/items.queries';
import { keyReaches, DatabaseDirectory } from '../../databases/database-directory';
import { DirectResponse } from '../../http/envelope.interceptor';
import { API_KEYS, BLOB_STORE, DATA_SOURCE } from '@crs/platform/tokens';
import type { DataSource } from 'typeorm';
import type { ApiKeyRepository } from '@crs/persistence/api-keys';
import type { BlobStore } from '@crs/persistence/blob-store';
import { aclDigest, presignedError, PresignedUrls } from '../presigned-urls';

/** What serving a presigned URL reads of its item. */
/** A stored content type as a response header: a plain `type/subtype`, text with its charset; anything else is bytes. */
function contentTypeHeader(stored: string): string {
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i.test(stored)) return 'application/octet-stream';
  return /^text\/|json|xml|csv|markdown/.test(stored) ? `${stored}; charset=utf-8` : stored;
}

/**
 * The content behind a presigned URL (made by GET /context/inspect with mode url or both): served without an API key
 * to whoever holds the URL, until it expires, as long as the item, its content version and its ACL are the ones it
 * was made for and the API key that asked for it is still valid and reaches the database. The answer is the bytes as
 * ingested, never cached, and sandboxed (a stored HTML page runs nothing on the service's origin).
 */
@ApiTags('context')
@Controller()
@DirectResponse()
export class PresignedContentController {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly directory: DatabaseDirectory,
    @Inject(API_KEYS) private readonly keys: ApiKeyRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly presigned: PresignedUrls,
  ) {}

  @Get('context/presigned/:token')
  @ApiOperation({
    summary:
      'Content of an item through a presigned URL from GET /context/inspect (mode url or both). No API key. 403 PRESIGNED_URL_INVALID / _EXPIRED / _REVOKED (the ACL, content or the asking key changed), 404 ITEM_NOT_FOUND once the item, its collection or database is gone.',
  })
  async content(@Param('token') token: string, @Res() reply: FastifyReply) {
    const claims = this.presigned.verify(token);
    const key = await this.keys.find(claims.key);
    if (!key || key.orgId !== claims.org) throw presignedError('PRESIGNED_URL_INVALID', 'this presigned URL names no key of its organization');
    if (key.revokedAt) throw presignedError('PRESIGNED_URL_REVOKED', 'the API key that made this presigned URL was revoked');
    const gone = () => notFound('ITEM_NOT_FOUND', 'the item of this presigned URL no longer exists');
    const db = await this.directory.findById(claims.org, claims.db);
    if (!db || db.status === 'deleting') throw gone();
    if (!keyReaches(key, db.name)) throw presignedError('PRESIGNED_URL_REVOKED', 'the API key that made this presigned URL no longer reaches its database');
    const item = await itemContent(this.ds, db.id, claims.item);
    if (!item || (item.expires_at && new Date(item.expires_at).getTime() <= Date.now())) throw gone();
    if (item.content_version !== claims.cv) throw presignedError('PRESIGNED_URL_REVOKED', 'the item was replaced by new content since this presigned URL was made');
    if (aclDigest(item.acl) !== claims.acl) throw presignedError('PRESIGNED_URL_REVOKED', "the item's access list changed since this presigned URL was made");
    const bytes = await this.blobs.get(db.id, item.content_sha256);
    reply
      .header('content-type', contentTypeHeader(item.content_type))
      .header('content-disposition', item.filename ? `inline; filename*=UTF-8''${encodeURIComponent(item.filename)}` : 'inline')
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "sandbox; default-src 'none'")
      .header('referrer-policy', 'no-referrer')
      .send(bytes);
  }
}
