import { ApiProperty, getSchemaPath } from '@nestjs/swagger';

/** GET /health. */
export class HealthResponse {
  @ApiProperty({ enum: ['ok'] }) status!: 'ok';
  @ApiProperty({ example: '2.0.1' }) api_version!: string;
  @ApiProperty({ example: '2.0.1' }) version!: string;
}

export class ProjectionCheck {
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer' }) position!: number;
  @ApiProperty({ type: 'integer' }) lag!: number;
  @ApiProperty({ type: String, nullable: true }) error!: string | null;
}

export class ReadinessChecks {
  @ApiProperty({ description: "'ok', or 'unreachable: <reason>'" }) postgres!: string;
  @ApiProperty({
    oneOf: [{ type: 'array', items: { $ref: getSchemaPath(ProjectionCheck) } }, { type: 'string', description: "'unavailable: <reason>'" }],
  })
  projections!: ProjectionCheck[] | string;
}

/** GET /ready: 200 ready, 503 not_ready, the same shape. */
export class ReadyResponse {
  @ApiProperty({ enum: ['ready', 'not_ready'] }) status!: 'ready' | 'not_ready';
  @ApiProperty() api_version!: string;
  @ApiProperty({ type: ReadinessChecks }) checks!: ReadinessChecks;
}
