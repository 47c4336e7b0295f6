import { createHash } from 'node:crypto';
import type { drive_v3 } from '@googleapis/drive';
import type { PermissionCapture, SyncedDocument } from '../../provider.port';
import { PERMISSION_FIELDS } from './google-drive-permissions';

export type DriveFile = drive_v3.Schema$File;

export const FOLDER_MIME = 'application/vnd.google-apps.folder';

/**
 * Google Docs editors files have no bytes of their own; they are exported (files.export, at most 10 MB) to a text
 * format the ingestion parsers read: Docs as Markdown (headings kept for chunking), Sheets as CSV (Drive exports the
 * first sheet only), Slides as plain text.
 */
export const GOOGLE_EXPORTS: Readonly<Record<string, string>> = {
  'application/vnd.google-apps.document': 'text/markdown',
  'application/vnd.google-apps.spreadsheet': 'text/csv',
  'application/vnd.google-apps.presentation': 'text/plain',
};

/**
 * Files downloaded as they are: the formats the ingestion parsers read (libs/ingestion/src/parsers/detect-format.ts).
 * Other files (images, video, archives, Office formats other than .docx, shortcuts, forms) are not documents of the
 * resource: neither synced nor listed.
 */
export const DOWNLOADED_TYPES: ReadonlySet<string> = new Set([
  'text/plain',
  'text/markdown',
  'text/x-markdown',
  'text/html',
  'application/xhtml+xml',
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/csv',
  'text/tab-separated-values',
  'application/json',
  'application/x-ndjson',
]);

/** The file fields a listing reads: enough to tell a document, its scope and its content hash. */
export const LISTED_FIELDS = 'id,name,mimeType,parents,driveId,trashed,modifiedTime,md5Checksum,size';

/** The file fields a sync reads: a listing's, the link, and the grants where Drive returns them with the file. */
export const FILE_FIELDS = `${LISTED_FIELDS},webViewLink,permissions(${PERMISSION_FIELDS})`;

export const isFolder = (file: DriveFile): boolean => file.mimeType === FOLDER_MIME;

/** Whether a file is a document of the resource (an exportable Google file or a format the parsers read). */
export const isDocument = (file: DriveFile): boolean => !!file.mimeType && (file.mimeType in GOOGLE_EXPORTS || DOWNLOADED_TYPES.has(file.mimeType));

export const parentOf = (file: DriveFile): string | null => file.parents?.[0] ?? null;

/**
 * A document's content hash, from metadata alone, so the listing tells it without downloading: the bytes' MD5 for an
 * uploaded file, the modification time for a Google file (it has no checksum), and everything else the document is
 * made of (name, type, folder, drive, export format, time). Grants are not part of it: a permission-only change leaves
 * it as it was.
 */
export function contentHash(file: DriveFile): string {
  const parts = [1, file.name ?? '', file.mimeType ?? '', parentOf(file), file.driveId ?? null, file.modifiedTime ?? null, file.md5Checksum ?? null, GOOGLE_EXPORTS[file.mimeType ?? ''] ?? null];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** The document a file becomes, with its bytes (downloaded or exported) and its per-document permission. */
export function documentOf(file: DriveFile, bytes: Uint8Array, permission: PermissionCapture): SyncedDocument {
  const exported = GOOGLE_EXPORTS[file.mimeType ?? ''];
  const folderId = parentOf(file);
  return {
    id: file.id!,
    title: file.name ?? file.id!,
    content: { kind: 'bytes', bytes, mimeType: exported ?? file.mimeType! },
    updatedAt: file.modifiedTime ?? null,
    contentHash: contentHash(file),
    metadata: {
      file_id: file.id!,
      mime_type: file.mimeType ?? null,
      ...(exported ? { exported_as: exported } : {}),
      ...(file.webViewLink ? { web_view_link: file.webViewLink } : {}),
      drive_id: file.driveId ?? null,
      folder_id: folderId,
    },
    filterableFields: { mime_type: file.mimeType ?? null, folder_id: folderId, drive_id: file.driveId ?? null, modified_time: file.modifiedTime ?? null },
    permission,
  };
}
