import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertDatabaseName } from '@crs/domain/names';
import { normalizeMetadataSchema } from '@crs/domain/metadata-schema';
import { DomainError } from '@crs/domain/errors';
import { authOf } from '../../http/auth.hook';
import { commandContext } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { deprecatedFieldInvalid, readScope } from '../../http/scope';
import { keyReaches } from '../database-directory';
import { DatabaseCommands } from '../database-commands';
import { APP_CONFIG } from '@crs/platform/tokens';
import type { AppConfig } from '@crs/config';
import { CreateDatabaseRequest } from './create-database.request.dto';

@ApiTags('databases')
@Controller()
export class CreateDatabaseController {
  constructor(private readonly commands: DatabaseCommands, @Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Post('databases')
  @HttpCode(202)
  @ApiOperation({ summary: 'Create an isolated database (asynchronous: poll /databases/status until all four flags are true)' })
  async create(@Req() req: FastifyRequest, @Body() body: CreateDatabaseRequest) {
    const { name, databaseId } = await this.run(req, body);
    return { database: name, database_id: databaseId, status: 'provisioning', message: `Database '${name}' is being provisioned; poll GET /databases/status?database=${name}` };
  }

  @Post('tenants')
  @HttpCode(202)
  @ApiOperation({ summary: 'Deprecated alias of POST /databases (original SDK shape)', deprecated: true })
  async createTenant(@Req() req: FastifyRequest, @Body() body: CreateDatabaseRequest) {
    addDeprecation(contextOf(req), '/tenants', '/databases');
    const { name } = await this.run(req, body);
    return { status: 'accepted', tenant_id: name, message: `Tenant '${name}' is being provisioned` };
  }

  private async run(req: FastifyRequest, body: CreateDatabaseRequest) {
    const ctx = contextOf(req);
    const scope = readScope(ctx, body ?? {}, { requireDatabase: true });
    const viaAlias = body?.database === undefined;
    let name: string;
    try {
      name = assertDatabaseName(scope.database, viaAlias ? 'tenant_id' : 'database');
    } catch (error) {
      throw viaAlias ? deprecatedFieldInvalid((error as Error).message, 'tenant_id', 'database') : error;
    }
    const auth = authOf(req);
    if (!keyReaches(auth, name)) {
      throw new DomainError('forbidden', 'FORBIDDEN', `this API key is limited to its listed databases and cannot create '${name}'`);
    }
    if (body.metadata_schema && body.tenant_metadata_schema) throw invalid('send metadata_schema or tenant_metadata_schema, not both');
    if (body.tenant_metadata_schema) addDeprecation(ctx, 'tenant_metadata_schema', 'metadata_schema');
    const schema = normalizeMetadataSchema(body.metadata_schema ?? body.tenant_metadata_schema, body.tenant_metadata_schema ? 'tenant_metadata_schema' : 'metadata_schema');
    const embedder = this.config.embedder;
    if (body.embeddings_dimension !== undefined && body.embeddings_dimension !== embedder.dimensions) {
      throw invalid(`embeddings_dimension ${body.embeddings_dimension} does not match the configured embedder ${embedder.modelId} (${embedder.dimensions} dimensions)`);
    }
    const { databaseId } = await this.commands.create(commandContext(req), name, schema, embedder);
    return { name, databaseId };
  }
}
