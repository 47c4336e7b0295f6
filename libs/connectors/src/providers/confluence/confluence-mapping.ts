import { createHash } from 'node:crypto';
import type { Models } from 'confluence.js';
import type { FilterableField, PermissionCapture, SyncedDocument } from '../../provider.port';
import { storageToText } from './confluence-storage-text';

export const FILTERABLE_FIELDS: FilterableField[] = [
  { name: 'space', type: 'string', description: 'The key of the space the page is in (e.g. ENG).' },
  { name: 'content_type', type: 'string', description: 'The kind of Confluence content; always "page".' },
  { name: 'last_modified_by', type: 'string', description: 'The public name of the person who made the page\'s current version.' },
  { name: 'version', type: 'number', description: 'The page\'s version number.' },
];

/** What a sync asks for with every page it reads in full. */
export const PAGE_EXPAND = ['version', 'ancestors', 'body.storage', 'restrictions.read.restrictions.user', 'restrictions.read.restrictions.group'];

/**
 * A page's content hash: its id and version number. Confluence gives every change of title or body a new version, so
 * the version stands for the content, and the listing (which reads versions, not bodies) reports the same hash a sync
 * gives. A restriction change makes no version and is not content: it travels as a `permission` event.
 */
export function pageHash(id: string, version: number): string {
  return createHash('sha256').update(`confluence-page:1:${id}:${version}`).digest('hex');
}

/**
 * A page read with `PAGE_EXPAND` as a synced document. A page no restriction applies to carries no per-document
 * permission (its space's verdict decides); a restricted one carries the permission given.
 */
export function pageToDocument(page: Models.Content, spaceKey: string, wikiUrl: string, permission: PermissionCapture): SyncedDocument {
  const version = page.version?.number ?? 0;
  const webui = typeof page._links?.webui === 'string' ? page._links.webui : `/pages/viewpage.action?pageId=${page.id}`;
  const lastModifiedBy = page.version?.by?.publicName || page.version?.by?.displayName || null;
  return {
    id: page.id,
    title: page.title,
    content: { kind: 'text', text: storageToText(page.body?.storage?.value ?? '') },
    updatedAt: page.version?.when ? new Date(page.version.when).toISOString() : null,
    contentHash: pageHash(page.id, version),
    metadata: { space_key: spaceKey, page_id: page.id, version, url: `${wikiUrl}${webui}` },
    filterableFields: { space: spaceKey, content_type: 'page', last_modified_by: lastModifiedBy, version },
    ...(permission.status === 'captured' && permission.acl === null ? {} : { permission }),
  };
}
