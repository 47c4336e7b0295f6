import { Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { authOf } from '../../http/auth.hook';
import { commandContext } from '../../http/command-context';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { booleanField, field, jsonField, readMultipart, type MultipartBody } from '../../http/multipart';
import { addDeprecation, contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { DatabaseDirectory } from '../../databases/database-directory';
import { IngestionService, type FileMetadataEntry } from '../ingestion.service';

const FILE_FIELDS = new Set(['documents', 'files', 'file', 'document']);
const KNOWN_FIELDS = new Set(['type', 'database', 'tenant_id', 'collection', 'sub_tenant_id', 'upsert', 'memories', 'app_knowledge', 'document_metadata', 'file_metadata']);

@ApiTags('context')
@Controller()
export class IngestContextController {
  constructor(private readonly ingestion: IngestionService, private readonly directory: DatabaseDirectory) {}

  @Post('context/ingest')
  @HttpCode(200)
  @ApiConsumes('multipart/form-data')
  @ApiOperation({ summary: 'Ingest memories (type=memory, `memories` JSON string) or knowledge (type=knowledge, files in `documents` and/or `app_knowledge`)' })
  async ingest(@Req() req: FastifyRequest) {
    const body = await readMultipart(req);
    // The original SDK may omit type: memories means memory, anything else knowledge.
    const type = field(body, 'type') ?? (body.fields.memories ? 'memory' : 'knowledge');
    if (type !== 'memory' && type !== 'knowledge') throw invalid(`type must be 'memory' or 'knowledge'`);
    return this.run(req, body, type);
  }

  @Post('ingestion/upload_knowledge')
  @HttpCode(200)
  @LegacyResponse()
  @ApiConsumes('multipart/form-data')
  @ApiOperation({ summary: 'Legacy: ingest files and/or app items (multipart always; nested fields are JSON strings). Returns source ids with status queued.', deprecated: true })
  async uploadKnowledge(@Req() req: FastifyRequest) {
    addDeprecation(contextOf(req), '/ingestion/upload_knowledge', '/context/ingest');
    const body = await readMultipart(req);
    const result = await this.run(req, body, 'knowledge');
    return { ...result, results: result.results.map((r) => ({ ...r, source_id: r.id })) };
  }

  private async run(req: FastifyRequest, body: MultipartBody, type: 'memory' | 'knowledge') {
    for (const name of Object.keys(body.fields)) if (!KNOWN_FIELDS.has(name)) throw invalid(`field ${name} is not an ingest field`);
    for (const f of body.files) if (!FILE_FIELDS.has(f.field)) throw invalid(`file field ${f.field} is not accepted; send files as 'documents'`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, { database: field(body, 'database'), tenant_id: field(body, 'tenant_id'), collection: field(body, 'collection'), sub_tenant_id: field(body, 'sub_tenant_id') }, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    ctx.scope.collection = collection;
    const upsert = booleanField(body, 'upsert', true);
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const now = new Date();
    let items;
    if (type === 'memory') {
      if (body.files.length) throw invalid('files are not accepted with type=memory');
      if (body.fields.app_knowledge) throw invalid('app_knowledge is not accepted with type=memory');
      items = this.ingestion.prepareMemories(db, collection, jsonField(body, 'memories'), now);
    } else {
      if (body.fields.memories) throw invalid('memories is not accepted with type=knowledge');
      const perFile = fileMetadata(body);
      // One entry per file, in file order: an entry left over or missing would pair a file with nothing, and an ACL
      // meant for it would be lost without a word (the file then stored unrestricted).
      if (perFile.length !== body.files.length) throw invalid(`file metadata has ${perFile.length} entries for ${body.files.length} file(s): send one per file, in the order of the files ({} for a file without metadata)`);
      items = [...this.ingestion.prepareFiles(db, collection, body.files, perFile), ...this.ingestion.prepareAppItems(db, collection, jsonField(body, 'app_knowledge'))];
      if (!items.length) throw invalid('type=knowledge needs files (field documents) and/or app_knowledge items');
    }
    const result = await this.ingestion.commit(commandContext(req), db, collection, upsert, items);
    echoSourceType(ctx, items.map((i) => ({ source_type: i.event.sourceType })));
    return result;
  }
}

/** `document_metadata` (SDK: array aligned with the files) or `file_metadata` (array aligned, or an object keyed by filename). */
function fileMetadata(body: MultipartBody): FileMetadataEntry[] {
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
