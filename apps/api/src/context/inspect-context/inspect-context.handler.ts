import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { invalid, notFound } from '@crs/domain/errors';
import type { BlobStore } from '@crs/persistence/blob-store';
import { BLOB_STORE, DATA_SOURCE } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { findItem, parseStoreType } from '../item-view';
import { aclDigest, PresignedUrls } from '../presigned-urls';

/** Largest content returned inline (larger items answer with size and type only). */
export const INSPECT_MAX_BYTES = 10 * 1024 * 1024;

/** The parameters of an inspection as sent (query string values): the handler checks them. */
export interface InspectContextParams {
  /** the item id (required) */
  id: unknown;
  /** `memory` or `knowledge`: needed when both stores hold the id */
  type?: unknown;
  /** `content` (default), `url` or `both` */
  mode?: unknown;
  /** lifetime of the presigned URL (modes url and both) */
  expirySeconds?: unknown;
  /** principals the inspection runs on behalf of (same meaning as in /query) */
  acl?: unknown[];
}

export interface InspectContextView {
  success: true;
  id: string;
  content_type: string;
  size_bytes: number;
  presigned_url: string | null;
  presigned_url_expires_at?: string;
  content: string | null;
  content_base64: string | null;
  error: string | null;
  message: string;
}

/** The content of one item as ingested, inline and/or as a presigned URL. */
export class InspectContext extends Query<{ view: InspectContextView; sourceType: string }> {
  constructor(
    readonly caller: Caller,
    readonly database: string,
    readonly collection: string,
    readonly params: InspectContextParams,
    /** scheme and host the presigned URL points at unless PUBLIC_URL is set */
    readonly urlBase: string,
  ) {
    super();
  }
}

/**
 * An item the caller may not see, or that expired, is not found. A presigned URL is bound to this content version and
 * ACL and to the asking key: a change of any of them revokes it.
 */
@QueryHandler(InspectContext)
export class InspectContextHandler implements IQueryHandler<InspectContext> {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly directory: DatabaseDirectory,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly presigned: PresignedUrls,
  ) {}

  async execute({ caller, database, collection, params, urlBase }: InspectContext): Promise<{ view: InspectContextView; sourceType: string }> {
    const id = params.id;
    if (typeof id !== 'string' || !id) throw invalid('id is required');
    const mode = (params.mode ?? 'content') as string;
    if (!['content', 'url', 'both'].includes(mode)) throw invalid("mode must be 'content', 'url' or 'both'");
    const exp = mode === 'content' ? null : this.presigned.expiryOf(params.expirySeconds);
    const db = await this.directory.resolve(caller.key, database);
    const item = await findItem(this.ds, db.id, collection, id, parseStoreType(params.type));
    const principals = callerPrincipals(params.acl);
    // The ACL that decides now (a synced document's from its resource's rules); a synced document its connector or
    // resource no longer serves is not found.
    if (!item.served || !isVisible(item.access_acl, principals) || (item.expires_at && new Date(item.expires_at).getTime() <= Date.now())) throw notFound('ITEM_NOT_FOUND', `no item with id '${id}'`);
    const size = Number(item.bytes);
    const presigned =
      exp === null
        ? null
        : this.presigned.url({ org: db.orgId, db: db.id, item: item.item_key, cv: item.content_version, acl: aclDigest(item.access_acl), key: caller.key.prefix, exp }, urlBase);
    const base = {
      success: true as const,
      id: item.item_id,
      content_type: item.content_type,
      size_bytes: size,
      presigned_url: presigned,
      ...(exp === null ? {} : { presigned_url_expires_at: new Date(exp * 1000).toISOString() }),
      content: null as string | null,
      content_base64: null as string | null,
      error: null as string | null,
    };
    const answer = (view: InspectContextView) => ({ view, sourceType: item.source_type });
    if (mode === 'url') return answer({ ...base, message: 'presigned URL returned: it serves the content without an API key until it expires' });
    if (size > INSPECT_MAX_BYTES) return answer({ ...base, message: `content is larger than ${INSPECT_MAX_BYTES} bytes; not returned inline${presigned ? ' (the presigned URL serves it)' : ''}` });
    const bytes = await this.blobs.get(db.id, item.content_sha256);
    const textual = item.pairs || /^text\/|json|csv|xml|markdown|html/.test(item.content_type);
    return answer(textual ? { ...base, content: bytes.toString('utf8'), message: 'content returned' } : { ...base, content_base64: bytes.toString('base64'), message: 'binary content returned as base64' });
  }
}
