import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';

const STATUSES = ['healthy', 'degraded', 'error', 'unauthorized'];
const LIFECYCLES = ['configuring', 'initial_sync', 'active', 'paused', 'deleting'];

/** A connector: its settings (credentials masked), status and lifecycle. */
export class ConnectorResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ example: 'postgres' }) provider!: string;
  @ApiProperty() database!: string;
  @ApiProperty({ description: 'Where synced documents go unless a resource routes them elsewhere' }) collection!: string;
  @ApiProperty({ type: String, nullable: true, description: 'null: none' }) custom_instructions!: string | null;
  @ApiProperty({ type: 'integer' }) sync_interval_seconds!: number;
  @ApiProperty() provider_account_scope!: string;
  @ApiProperty({ description: "Whether the source's own permissions are captured on every sync (rule 11); false: the resources' acl rules alone decide" }) capture_permissions!: boolean;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', enum: ['***'] }, description: 'The credential fields that are set, each shown as "***": credentials are never returned' })
  credentials!: Record<string, string>;
  @ApiProperty({ enum: STATUSES }) status!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Why the status is not healthy' }) status_reason!: string | null;
  @ApiProperty({ enum: LIFECYCLES }) lifecycle!: string;
  @ApiProperty({ description: 'Scheduled syncs are off' }) paused!: boolean;
  @ApiProperty({ type: 'integer', description: 'Configured resources (removed ones not counted)' }) resource_count!: number;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) last_sync_ended_at!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class SyncCountsResponse {
  @ApiProperty({ type: 'integer' }) upserted!: number;
  @ApiProperty({ type: 'integer' }) unchanged!: number;
  @ApiProperty({ type: 'integer' }) deleted!: number;
  @ApiProperty({ type: 'integer' }) failed!: number;
  @ApiProperty({ type: 'integer', description: 'Documents whose source permission alone changed: applied without a new version' }) permissions!: number;
}

/** How the resource's last sync ended. */
export class LastSyncResponse {
  @ApiProperty() sync_id!: string;
  @ApiProperty({ enum: ['completed', 'deferred', 'failed'] }) outcome!: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) ended_at!: string | null;
  @ApiPropertyOptional({ type: SyncCountsResponse, description: 'completed: the sync\'s totals' }) counts?: SyncCountsResponse;
  @ApiPropertyOptional({ format: 'date-time', description: 'deferred: when it resumes' }) retry_at?: string;
  @ApiPropertyOptional({ enum: ['rate_limited', 'stopped'], description: 'deferred: why' }) reason?: string;
  @ApiPropertyOptional({ enum: ['auth', 'scope', 'transient', 'resource_gone', 'configuration', 'internal'], description: 'failed: the kind of failure' }) failure?: string;
  @ApiPropertyOptional({ description: 'failed: what went wrong' }) message?: string;
}

/** `LastSyncResponse` or null (a `$ref` cannot itself be nullable in OpenAPI 3.0). */
export const NULLABLE_LAST_SYNC = { oneOf: [{ $ref: getSchemaPath(LastSyncResponse) }, { type: 'object', nullable: true, enum: [null], description: 'null: no sync has ended yet' }] } as const;

/** A resource: its settings, status and lifecycle. */
@ApiExtraModels(LastSyncResponse)
export class ResourceResponse {
  @ApiProperty() resource_id!: string;
  @ApiProperty() resource_type!: string;
  @ApiProperty() name!: string;
  @ApiProperty() database!: string;
  @ApiProperty({ description: "The collection its documents go to (the connector's unless the resource sets one)" }) collection!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) metadata!: Record<string, unknown> | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) additional_metadata!: Record<string, unknown> | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) options!: Record<string, unknown> | null;
  @ApiProperty({ type: [String], nullable: true, description: 'The access rule set through the API; null: none was ever set' }) acl!: string[] | null;
  @ApiPropertyOptional({ description: "The resource's own instructions; absent when it inherits the connector's" }) custom_instructions?: string;
  @ApiProperty({ type: String, nullable: true, description: "The instructions its documents are synced under: the resource's, else the connector's, else none" })
  effective_custom_instructions!: string | null;
  @ApiProperty({ type: 'integer', description: 'Increases when the resource is replaced or added again (its sync starts from the beginning)' }) generation!: number;
  @ApiProperty({ enum: STATUSES }) status!: string;
  @ApiProperty({ type: String, nullable: true }) status_reason!: string | null;
  @ApiProperty({ enum: ['initial_sync', 'active', 'paused'] }) lifecycle!: string;
  @ApiProperty({ description: 'A sync of it is running' }) syncing!: boolean;
  @ApiProperty(NULLABLE_LAST_SYNC as any) last_sync!: LastSyncResponse | null;
}

/** A connector id and its resources. */
export class ConnectorResourcesResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ type: [ResourceResponse] }) resources!: ResourceResponse[];
}
