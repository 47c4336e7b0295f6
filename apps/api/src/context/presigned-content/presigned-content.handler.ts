import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { notFound } from '@crs/domain/errors';
import type { ApiKeyRepository } from '@crs/persistence/api-keys';
import type { BlobStore } from '@crs/persistence/blob-store';
import { API_KEYS, BLOB_STORE, DATA_SOURCE } from '@crs/platform/tokens';
import { itemContent } from '@crs/projections/items/items.queries';
import { DatabaseDirectory, keyReaches } from '../../databases/database-directory';
import { aclDigest, presignedError, PresignedUrls } from '../presigned-urls';

export interface PresignedContent {
  bytes: Buffer;
  /** as stored at ingest */
  contentType: string;
  filename: string | null;
}

/**
 * The content behind a presigned URL. The URL is its own credential: no API key asks, so the query carries no caller,
 * only the token.
 */
export class GetPresignedContent extends Query<PresignedContent> {
  constructor(readonly token: string) {
    super();
  }
}

/**
 * Served to whoever holds the URL, until it expires, as long as the item, its content version and its ACL are the
 * ones it was made for and the API key that asked for it is still valid and reaches the database. 403
 * PRESIGNED_URL_INVALID / _EXPIRED / _REVOKED otherwise, 404 ITEM_NOT_FOUND once the item, its collection or
 * database is gone.
 */
@QueryHandler(GetPresignedContent)
export class GetPresignedContentHandler implements IQueryHandler<GetPresignedContent> {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly directory: DatabaseDirectory,
    @Inject(API_KEYS) private readonly keys: ApiKeyRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly presigned: PresignedUrls,
  ) {}

  async execute({ token }: GetPresignedContent): Promise<PresignedContent> {
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
    return { bytes, contentType: item.content_type, filename: item.filename };
  }
}
