import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendError } from './exception.filter';
import { MULTIPART_ROUTES, unsupportedMediaType } from './media-type';
import { DomainError, invalid } from '@crs/domain/errors';

/** Upload limits (docs/ingestion.md). */
export const UPLOAD_LIMITS = {
  fileBytes: 50 * 1024 * 1024,
  files: 20,
  requestBytes: 100 * 1024 * 1024,
  fieldBytes: 25 * 1024 * 1024,
  fields: 100,
};

export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface MultipartBody {
  /** Every text field; repeated names keep every value in order. */
  fields: Record<string, string[]>;
  files: UploadedFile[];
}

/**
 * Reads a whole multipart body before anything is decided: the original SDK sends file parts before
 * `document_metadata`, so files can only be paired with their metadata at the end.
 */
export async function readMultipart(req: FastifyRequest): Promise<MultipartBody> {
  if (!req.isMultipart()) throw unsupportedMediaType(req, 'multipart/form-data');
  const fields: Record<string, string[]> = {};
  const files: UploadedFile[] = [];
  let total = 0;
  let fieldCount = 0;
  // A field part declared application/json is read here, as a stream, rather than by the parser: the parser refuses
  // one over the field limit with the same error as one that does not parse (so it was 400 for its size). As a
  // stream it counts against the parser's file limit, which is raised by the field limit; both limits are checked below.
  const parts = () =>
    req.parts({
      limits: { fileSize: UPLOAD_LIMITS.fileBytes, files: UPLOAD_LIMITS.files + UPLOAD_LIMITS.fields, fieldSize: UPLOAD_LIMITS.fieldBytes, fields: UPLOAD_LIMITS.fields },
      isPartAFile: (_name: string, contentType: string, filename: string | undefined) => filename !== undefined || contentType === 'application/octet-stream' || contentType === 'application/json',
    } as Parameters<FastifyRequest['parts']>[0]);
  for await (const part of malformedAs400(parts)) {
    if (part.type === 'file' && part.filename === undefined && part.mimetype === 'application/json') {
      if (++fieldCount > UPLOAD_LIMITS.fields) throw new DomainError('too_large', 'PAYLOAD_TOO_LARGE', 'Too many fields in one request');
      const value = jsonFieldText(part.fieldname, await readCapped(part.file, part.fieldname));
      total += value.length;
      (fields[part.fieldname] ??= []).push(value);
    } else if (part.type === 'file') {
      if (files.length === UPLOAD_LIMITS.files) throw new DomainError('too_large', 'PAYLOAD_TOO_LARGE', 'Too many files in one request');
      const bytes = await part.toBuffer().catch((error: unknown) => {
        throw readError(error);
      });
      total += bytes.length;
      files.push({ field: part.fieldname, filename: part.filename || 'upload', contentType: part.mimetype || 'application/octet-stream', bytes });
    } else {
      if ((part as { valueTruncated?: boolean }).valueTruncated) throw fieldTooLarge(part.fieldname);
      if (++fieldCount > UPLOAD_LIMITS.fields) throw new DomainError('too_large', 'PAYLOAD_TOO_LARGE', 'Too many fields in one request');
      const value = typeof part.value === 'string' ? part.value : String(part.value ?? '');
      total += value.length;
      (fields[part.fieldname] ??= []).push(value);
    }
    if (total > UPLOAD_LIMITS.requestBytes) {
      throw new DomainError('too_large', 'PAYLOAD_TOO_LARGE', `request is larger than ${UPLOAD_LIMITS.requestBytes / 1024 / 1024} MiB`);
    }
  }
  assertClosed(req);
  return { fields, files };
}

const fieldTooLarge = (name: string) => new DomainError('too_large', 'PAYLOAD_TOO_LARGE', `field ${name} is larger than ${UPLOAD_LIMITS.fieldBytes / 1024 / 1024} MiB`);

/** A field part's bytes, up to the field limit: one byte more is 413 for that field (the rest is not read). */
async function readCapped(stream: AsyncIterable<Buffer>, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > UPLOAD_LIMITS.fieldBytes) throw fieldTooLarge(name);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * A field part declared application/json: its JSON text, which the endpoint parses and checks like any other field's;
 * a JSON string is taken as its text (`"memory"` for `type` means memory). One that does not parse is 400.
 */
function jsonFieldText(name: string, bytes: Buffer): string {
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(`a field part declared application/json is not valid JSON (field ${name})`);
  }
  return typeof parsed === 'string' ? parsed : text;
}

/** The single value of a field; a repeated field is 400. */
export function field(body: MultipartBody, name: string): string | undefined {
  const v = body.fields[name];
  if (!v) return undefined;
  if (v.length > 1) throw invalid(`field ${name} was sent ${v.length} times`);
  return v[0];
}

export function booleanField(body: MultipartBody, name: string, fallback: boolean): boolean {
  const v = field(body, name);
  if (v === undefined || v === '') return fallback;
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === '1') return true;
  if (s === 'false' || s === '0') return false;
  throw invalid(`${name} must be true or false`);
}

export function jsonField(body: MultipartBody, name: string): unknown {
  const v = field(body, name);
  if (v === undefined || v.trim() === '') return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw invalid(`${name} must be a JSON-encoded string`);
  }
}

/** The routes that take multipart/form-data (readMultipart); every other route with a body takes JSON. */

/**
 * A multipart body sent to a JSON endpoint would otherwise reach it as an empty body and fail on whichever field
 * is checked first ("database is required"): it is refused up front, before the body is read.
 */
export function registerMultipartRouteCheck(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', async (req, reply) => {
    const route = (req as any).routeOptions?.url as string | undefined;
    if (!route || !req.isMultipart()) return;
    if (MULTIPART_ROUTES.includes(route)) return recordTail(req);
    sendError(req, reply, unsupportedMediaType(req, 'application/json'));
    return reply;
  });
}

/** The last bytes of a multipart body: enough for the closing delimiter (a boundary is at most 70 characters) and an epilogue. */
const TAIL_BYTES = 1024;
const TAIL = Symbol('multipart tail');

/**
 * Keeps the last bytes of the raw body as the multipart parser reads it. The stream is paused first, so adding the
 * listener does not start the flow: the parser's pipe does, and both see every chunk.
 */
function recordTail(req: FastifyRequest): void {
  const tail = { bytes: Buffer.alloc(0) };
  req.raw.pause();
  req.raw.on('data', (chunk: Buffer) => {
    tail.bytes = Buffer.concat([tail.bytes, chunk]).subarray(-TAIL_BYTES);
  });
  (req as unknown as Record<symbol, unknown>)[TAIL] = tail;
}

/**
 * The parser takes a body that ends without its closing delimiter (`--<boundary>--`) for a complete one and drops the
 * part it was in: a request cut short could lose its last field (the SDK sends `document_metadata`, the files' ACL,
 * last). So the body must end with the delimiter, or nothing is stored.
 */
function assertClosed(req: FastifyRequest): void {
  const tail = (req as unknown as Record<symbol, { bytes: Buffer } | undefined>)[TAIL];
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(String(req.headers['content-type'] ?? ''));
  if (!tail || !boundary) return;
  if (!tail.bytes.includes(Buffer.from(`--${boundary[1] ?? boundary[2]}--`))) {
    throw invalid('the multipart body ended before its closing boundary (cut short?); nothing was stored');
  }
}

/**
 * A multipart body the parser cannot read (no boundary, a file part cut short) is the client's error: 400, not 500.
 * Errors the parser raises for limits keep their codes (mapError maps them to 413). A body cut short after a complete
 * field part the parser takes for a whole one: assertClosed catches that.
 */
async function* malformedAs400<T>(parts: () => AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* parts();
  } catch (error) {
    throw readError(error);
  }
}

/** A parser error as the client's 400; limit errors (FST_*) and our own keep their meaning. */
function readError(error: unknown): unknown {
  const e = error as { code?: string; message?: string };
  if (typeof e.code === 'string' && e.code.startsWith('FST_')) return error;
  if (error instanceof DomainError) return error;
  return invalid(`the multipart body could not be read: ${e.message ?? String(error)}`);
}
