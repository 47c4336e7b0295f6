import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertDatabaseName } from '@crs/domain/names';
import { normalizeMetadataSchema } from '@crs/domain/metadata-schema';
import { callerOf } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { deprecatedFieldInvalid, readScope } from '../../http/scope';
import { CreateDatabaseRequest } from './create-database.request.dto';
import { CreateDatabase } from './create-database.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CreateDatabaseResponse, CreateTenantResponse } from './create-database.response.dto';

@ApiTags('databases')
@Controller()
export class CreateDatabaseController {
  constructor(private readonly commands: CommandBus) {}

  @Post('databases')
  @HttpCode(202)
  @ApiOperation({ summary: 'Create an isolated database (asynchronous: poll /databases/status until all four flags are true)' })
  @ApiEnvelopedResponse(CreateDatabaseResponse, 202, 'Accepted: the database is being provisioned')
  @ApiErrorResponses(400, 401, [403, 'FORBIDDEN: a key limited to listed databases may create only those'], [409, 'DATABASE_EXISTS, DATABASE_DELETING'], 413, 415)
  async create(@Req() req: FastifyRequest, @Body() body: CreateDatabaseRequest) {
    const command = this.command(req, body);
    const { databaseId } = await this.commands.execute(command);
    const name = command.name;
    return { database: name, database_id: databaseId, status: 'provisioning', message: `Database '${name}' is being provisioned; poll GET /databases/status?database=${name}` };
  }

  @Post('tenants')
  @HttpCode(202)
  @ApiOperation({ summary: 'Deprecated alias of POST /databases (original SDK shape)', deprecated: true })
  @ApiEnvelopedResponse(CreateTenantResponse, 202, 'Accepted: the database is being provisioned')
  @ApiErrorResponses(400, 401, [403, 'FORBIDDEN: a key limited to listed databases may create only those'], [409, 'DATABASE_EXISTS, DATABASE_DELETING'], 413, 415)
  async createTenant(@Req() req: FastifyRequest, @Body() body: CreateDatabaseRequest) {
    addDeprecation(contextOf(req), '/tenants', '/databases');
    const command = this.command(req, body);
    await this.commands.execute(command);
    return { status: 'accepted', tenant_id: command.name, message: `Tenant '${command.name}' is being provisioned` };
  }

  /** The name and schema from whichever of the current or deprecated fields the client sent (errors name that field). */
  private command(req: FastifyRequest, body: CreateDatabaseRequest): CreateDatabase {
    const ctx = contextOf(req);
    const scope = readScope(ctx, body ?? {}, { requireDatabase: true });
    const viaAlias = body?.database === undefined;
    let name: string;
    try {
      name = assertDatabaseName(scope.database, viaAlias ? 'tenant_id' : 'database');
    } catch (error) {
      throw viaAlias ? deprecatedFieldInvalid((error as Error).message, 'tenant_id', 'database') : error;
    }
    if (body.metadata_schema && body.tenant_metadata_schema) throw invalid('send metadata_schema or tenant_metadata_schema, not both');
    if (body.tenant_metadata_schema) addDeprecation(ctx, 'tenant_metadata_schema', 'metadata_schema');
    const schema = normalizeMetadataSchema(body.metadata_schema ?? body.tenant_metadata_schema, body.tenant_metadata_schema ? 'tenant_metadata_schema' : 'metadata_schema');
    return new CreateDatabase(callerOf(req), name, schema, body.embeddings_dimension);
  }
}
