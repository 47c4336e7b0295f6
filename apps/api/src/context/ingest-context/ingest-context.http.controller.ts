import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { booleanField, field, jsonField, readMultipart, type MultipartBody } from '../../http/multipart';
import { addDeprecation, contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { validateParsed } from '../../http/validation';
import { IngestContextRequest } from './ingest-context.request.dto';
import { IngestContext, type IngestPayload } from './ingest-context.handler';
import type { FileMetadataEntry } from './prepare-items';
import { ApiEnvelopedResponse, ApiErrorResponses, ApiLegacyResponse } from '../../http/openapi';
import { IngestContextResponse, UploadKnowledgeResponse } from './ingest-context.response.dto';

const FILE_FIELDS = new Set(['documents', 'files', 'file', 'document']);

@ApiTags('context')
@Controller()
export class IngestContextController {
  constructor(private readonly commands: CommandBus) {}

  @Post('context/ingest')
  @HttpCode(200)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: IngestContextRequest })
  @ApiOperation({ summary: 'Ingest memories (type=memory, `memories` JSON string) or knowledge (type=knowledge, files in `documents` and/or `app_knowledge`)' })
  @ApiEnvelopedResponse(IngestContextResponse)
  @ApiErrorResponses(400, 401, 404, [409, 'COLLECTION_DELETING: the collection is being deleted'], 413, 415)
  async ingest(@Req() req: FastifyRequest) {
    const body = await readMultipart(req);
    const fields = await this.fields(body);
    // The original SDK may omit type: memories means memory, anything else knowledge.
    return this.run(req, body, fields, (fields.type as 'memory' | 'knowledge' | undefined) ?? (body.fields.memories ? 'memory' : 'knowledge'));
  }

  @Post('ingestion/upload_knowledge')
  @HttpCode(200)
  @LegacyResponse()
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: IngestContextRequest })
  @ApiOperation({ summary: 'Legacy: ingest files and/or app items (multipart always; nested fields are JSON strings). Returns source ids with status queued.', deprecated: true })
  @ApiLegacyResponse(UploadKnowledgeResponse)
  @ApiErrorResponses(400, 401, 404, [409, 'COLLECTION_DELETING: the collection is being deleted'], 413, 415)
  async uploadKnowledge(@Req() req: FastifyRequest) {
    addDeprecation(contextOf(req), '/ingestion/upload_knowledge', '/context/ingest');
    const body = await readMultipart(req);
    const result = await this.run(req, body, await this.fields(body), 'knowledge');
    return { ...result, results: result.results.map((r) => ({ ...r, source_id: r.id })) };
  }

  /** The text fields, each sent once, checked by the request DTO; file parts must be named as the SDK names them. */
  private async fields(body: MultipartBody): Promise<IngestContextRequest> {
    const plain = Object.fromEntries(Object.keys(body.fields).map((name) => [name, field(body, name)]));
    const fields = await validateParsed(IngestContextRequest, plain);
    for (const f of body.files) if (!FILE_FIELDS.has(f.field)) throw invalid(`file field ${f.field} is not accepted; send files as 'documents'`);
    return fields;
  }

  private async run(req: FastifyRequest, body: MultipartBody, fields: IngestContextRequest, type: 'memory' | 'knowledge') {
    const ctx = contextOf(req);
    const scope = readScope(ctx, fields, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    ctx.scope.collection = collection;
    const upsert = booleanField(body, 'upsert', true);
    let payload: IngestPayload;
    if (type === 'memory') {
      if (body.files.length) throw invalid('files are not accepted with type=memory');
      if (fields.app_knowledge) throw invalid('app_knowledge is not accepted with type=memory');
      payload = { type, memories: jsonField(body, 'memories') };
    } else {
      if (fields.memories) throw invalid('memories is not accepted with type=knowledge');
      const fileMetadata = fileMetadataOf(body);
      // One entry per file, in file order: an entry left over or missing would pair a file with nothing, and an ACL
      // meant for it would be lost without a word (the file then stored unrestricted).
      if (fileMetadata.length !== body.files.length) throw invalid(`file metadata has ${fileMetadata.length} entries for ${body.files.length} file(s): send one per file, in the order of the files ({} for a file without metadata)`);
      payload = { type, files: body.files, fileMetadata, appKnowledge: jsonField(body, 'app_knowledge') };
    }
    const { result, sourceTypes } = await this.commands.execute(new IngestContext(callerOf(req), scope.database!, collection, upsert, payload));
    echoSourceType(ctx, sourceTypes.map((source_type) => ({ source_type })));
    return result;
  }
}

/** `document_metadata` (SDK: array aligned with the files) or `file_metadata` (array aligned, or an object keyed by filename). */
function fileMetadataOf(body: MultipartBody): FileMetadataEntry[] {
  const raw = jsonField(body, 'document_metadata') ?? jsonField(body, 'file_metadata');
  if (raw === undefined) return body.files.map(() => ({ hasAcl: false }));
  const entry = (x: unknown, where: string): FileMetadataEntry => {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) throw invalid(`${where} must be an object`);
    const o = x as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!['id', 'title', 'metadata', 'additional_metadata', 'acl', 'infer', 'relations'].includes(k)) throw invalid(`${where}.${k} is not a file metadata field`);
    return { id: o.id as string | undefined, title: o.title as string | undefined, metadata: o.metadata, additional_metadata: o.additional_metadata, acl: o.acl, hasAcl: 'acl' in o, relations: o.relations };
  };
  if (Array.isArray(raw)) return raw.map((x, i) => entry(x, `file metadata[${i}]`));
  if (typeof raw === 'object' && raw !== null) {
    const byName = raw as Record<string, unknown>;
    const names = new Set(body.files.map((f) => f.filename));
    const unmatched = Object.keys(byName).filter((k) => !names.has(k));
    if (unmatched.length) throw invalid(`file_metadata names no uploaded file: ${unmatched.slice(0, 5).map((k) => JSON.stringify(k)).join(', ')} (files: ${[...names].slice(0, 20).map((k) => JSON.stringify(k)).join(', ')}; names match exactly)`);
    return body.files.map((f) => (!Object.prototype.hasOwnProperty.call(byName, f.filename) ? { hasAcl: false } : entry(byName[f.filename], `file_metadata.${f.filename}`)));
  }
  throw invalid('document_metadata / file_metadata must encode an array or an object');
}
