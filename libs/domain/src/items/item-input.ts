import { characterLength } from '../text-length';
import { createHash } from 'node:crypto';
import { invalid } from '../errors';

export type MetadataValue = string | number | boolean | null | unknown[] | Record<string, unknown>;

/** Whether a value is one a metadata field can hold: what JSON gives (a string, number, boolean, null, list or object). */
export function isMetadataValue(value: unknown): value is MetadataValue {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'object';
}

/** Limits on what one ingest request may carry (docs/ingestion.md). */
export const LIMITS = {
  itemsPerRequest: 500,
  textChars: 1_000_000,
  pairsPerMemory: 1000,
  titleChars: 1000,
  idChars: 256,
  customInstructionsChars: 4000,
  userNameChars: 256,
  relationsPerItem: 100,
  additionalMetadataBytes: 16 * 1024,
  metadataBytes: 16 * 1024,
};

/** The item key: one stream and one row per (collection, store, id) inside a database. */
export function itemKey(collection: string, store: string, itemId: string): string {
  return createHash('sha256').update(`${collection}\u0000${store}\u0000${itemId}`).digest('hex').slice(0, 32);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface MemoryInput {
  id?: string;
  title: string | null;
  text?: string;
  pairs?: { user: string; assistant: string }[];
  isMarkdown: boolean;
  infer: boolean;
  customInstructions: string | null;
  userName: string | null;
  expiryTimeSeconds: number | null;
  /** parsed from the JSON-encoded string */
  metadata: Record<string, MetadataValue>;
  additionalMetadata: Record<string, unknown>;
  relations: string[];
}

const MEMORY_FIELDS = new Set(['id', 'source_id', 'title', 'text', 'user_assistant_pairs', 'is_markdown', 'infer', 'custom_instructions', 'user_name', 'expiry_time', 'metadata', 'additional_metadata', 'relations']);

function str(v: unknown, field: string, max: number): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${field} must be a string`);
  if (characterLength(v) > max) throw invalid(`${field} is longer than ${max} characters`);
  return v;
}

function bool(v: unknown, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(`${field} must be a boolean`);
  return v;
}

export function validateItemId(v: unknown, field: string): string | undefined {
  const id = str(v, field, LIMITS.idChars);
  if (id !== undefined && id.trim() === '') throw invalid(`${field} must not be blank`);
  return id;
}

/** A memory's `metadata` must be a JSON-encoded string holding an object (an object is 400 INVALID_INPUT). */
export function parseMetadataString(v: unknown, field: string): Record<string, MetadataValue> {
  if (v === undefined || v === null || v === '') return {};
  if (typeof v !== 'string') throw invalid(`${field} must be a JSON-encoded string (for example "{\\"team\\":\\"a\\"}"), not ${Array.isArray(v) ? 'an array' : typeof v}`);
  if (v.length > LIMITS.metadataBytes) throw invalid(`${field} is larger than ${LIMITS.metadataBytes} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw invalid(`${field} is not valid JSON`);
  }
  if (!isObject(parsed)) throw invalid(`${field} must encode a JSON object`);
  return parsed as Record<string, MetadataValue>;
}

export function parseAdditionalMetadata(v: unknown, field: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw invalid(`${field} must be an object`);
  if (JSON.stringify(v).length > LIMITS.additionalMetadataBytes) throw invalid(`${field} is larger than ${LIMITS.additionalMetadataBytes} bytes`);
  return v;
}

/** Schema metadata sent as an object rather than the original SDK's JSON string: the checks of additional_metadata. */
export function parseMetadataObject(v: unknown, field: string): Record<string, MetadataValue> {
  const entries = Object.entries(parseAdditionalMetadata(v, field));
  const values = entries.filter((entry): entry is [string, MetadataValue] => isMetadataValue(entry[1]));
  if (values.length !== entries.length) throw invalid(`${field} must hold JSON values only`);
  // fromEntries defines each key as an own property, "__proto__" included, as JSON.parse does.
  return Object.fromEntries(values);
}

/** Validates one element of `memories` exactly as the spec's memory item rules say. */
export function parseMemoryItem(raw: unknown, index: number): MemoryInput {
  const f = `memories[${index}]`;
  if (!isObject(raw)) throw invalid(`${f} must be an object`);
  for (const key of Object.keys(raw)) if (!MEMORY_FIELDS.has(key)) throw invalid(`${f}.${key} is not a memory item field`);
  const id = validateItemId(raw.id ?? raw.source_id, `${f}.id`);
  const text = str(raw.text, `${f}.text`, LIMITS.textChars);
  const hasText = text !== undefined;
  const hasPairs = raw.user_assistant_pairs !== undefined && raw.user_assistant_pairs !== null;
  if (hasText && hasPairs) throw invalid(`${f}: give text or user_assistant_pairs, not both`);
  if (!hasText && !hasPairs) throw invalid(`${f}: text or user_assistant_pairs is required`);
  let pairs: { user: string; assistant: string }[] | undefined;
  if (hasPairs) {
    if (!Array.isArray(raw.user_assistant_pairs) || raw.user_assistant_pairs.length === 0) throw invalid(`${f}.user_assistant_pairs must be a non-empty array`);
    if (raw.user_assistant_pairs.length > LIMITS.pairsPerMemory) throw invalid(`${f}.user_assistant_pairs has more than ${LIMITS.pairsPerMemory} pairs`);
    pairs = raw.user_assistant_pairs.map((p, i) => {
      if (!isObject(p) || typeof p.user !== 'string' || typeof p.assistant !== 'string') throw invalid(`${f}.user_assistant_pairs[${i}] must be {user: string, assistant: string}`);
      return { user: p.user, assistant: p.assistant };
    });
  }
  if (hasText && text!.trim() === '') throw invalid(`${f}.text must not be blank`);
  const infer = bool(raw.infer, `${f}.infer`);
  const customInstructions = str(raw.custom_instructions, `${f}.custom_instructions`, LIMITS.customInstructionsChars) ?? null;
  let expiry: number | null = null;
  if (raw.expiry_time !== undefined && raw.expiry_time !== null) {
    if (!Number.isInteger(raw.expiry_time) || (raw.expiry_time as number) <= 0) throw invalid(`${f}.expiry_time must be a positive integer number of seconds`);
    expiry = raw.expiry_time as number;
  }
  const relations = parseRelations(raw.relations, `${f}.relations`);
  return {
    id,
    title: str(raw.title, `${f}.title`, LIMITS.titleChars) ?? null,
    text,
    pairs,
    isMarkdown: bool(raw.is_markdown, `${f}.is_markdown`),
    infer,
    // Kept only when infer is true (spec: ignored otherwise).
    customInstructions: infer ? customInstructions : null,
    userName: str(raw.user_name, `${f}.user_name`, LIMITS.userNameChars) ?? null,
    expiryTimeSeconds: expiry,
    metadata: parseMetadataString(raw.metadata, `${f}.metadata`),
    additionalMetadata: parseAdditionalMetadata(raw.additional_metadata, `${f}.additional_metadata`),
    relations,
  };
}

export interface AppItemInput {
  id: string;
  appKind: string | null;
  appProvider: string | null;
  title: string | null;
  text: string;
  acl: unknown;
  hasAcl: boolean;
  metadata: Record<string, MetadataValue>;
  additionalMetadata: Record<string, unknown>;
  url: string | null;
  timestamp: string | null;
}

const APP_FIELDS = new Set(['id', 'app_kind', 'app_provider', 'content', 'acl', 'title', 'metadata', 'additional_metadata', 'url', 'timestamp']);

export function parseAppItem(raw: unknown, index: number): AppItemInput {
  const f = `app_knowledge[${index}]`;
  if (!isObject(raw)) throw invalid(`${f} must be an object`);
  for (const key of Object.keys(raw)) if (!APP_FIELDS.has(key)) throw invalid(`${f}.${key} is not an app knowledge field`);
  const id = validateItemId(raw.id, `${f}.id`);
  if (!id) throw invalid(`${f}.id is required`);
  if (!isObject(raw.content) || typeof raw.content.text !== 'string') throw invalid(`${f}.content must be {text: string}`);
  if (characterLength(raw.content.text) > LIMITS.textChars) throw invalid(`${f}.content.text is longer than ${LIMITS.textChars} characters`);
  if (raw.content.text.trim() === '') throw invalid(`${f}.content.text must not be blank`);
  const metadata = typeof raw.metadata === 'string' ? parseMetadataString(raw.metadata, `${f}.metadata`) : (parseAdditionalMetadata(raw.metadata, `${f}.metadata`) as Record<string, MetadataValue>);
  return {
    id,
    appKind: str(raw.app_kind, `${f}.app_kind`, 128) ?? null,
    appProvider: str(raw.app_provider, `${f}.app_provider`, 128) ?? null,
    title: str(raw.title, `${f}.title`, LIMITS.titleChars) ?? null,
    text: raw.content.text,
    acl: raw.acl,
    hasAcl: Object.prototype.hasOwnProperty.call(raw, 'acl'),
    metadata,
    additionalMetadata: parseAdditionalMetadata(raw.additional_metadata, `${f}.additional_metadata`),
    url: str(raw.url, `${f}.url`, 4096) ?? null,
    timestamp: str(raw.timestamp, `${f}.timestamp`, 64) ?? null,
  };
}

/**
 * Forceful relations of an item: `{ids: [...]}`, or the SDK's knowledge form `{cortex_source_ids: [...], properties}`
 * (properties are accepted and not used). Absent or null: none.
 */
export function parseRelations(raw: unknown, field: string): string[] {
  if (raw === undefined || raw === null) return [];
  if (!isObject(raw)) throw invalid(`${field} must be an object {ids: [string]} (or {cortex_source_ids: [string]})`);
  for (const k of Object.keys(raw)) if (!['ids', 'cortex_source_ids', 'properties'].includes(k)) throw invalid(`${field}.${k} is not a relations field (ids, cortex_source_ids, properties)`);
  for (const key of ['ids', 'cortex_source_ids']) {
    if (raw[key] !== undefined && raw[key] !== null && !Array.isArray(raw[key])) throw invalid(`${field}.${key} must be an array of ids`);
  }
  const ids = [...((raw.ids as unknown[] | null | undefined) ?? []), ...((raw.cortex_source_ids as unknown[] | null | undefined) ?? [])];
  if (ids.some((x) => typeof x !== 'string' || x.length === 0 || characterLength(x) > LIMITS.idChars)) throw invalid(`${field}.ids must be an array of ids`);
  const unique = [...new Set(ids as string[])];
  if (unique.length > LIMITS.relationsPerItem) throw invalid(`${field}.ids has more than ${LIMITS.relationsPerItem} ids`);
  return unique;
}
