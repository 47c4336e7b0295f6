import { ApiProperty } from '@nestjs/swagger';

/** POST /databases: accepted; provisioning goes on (poll GET /databases/status). */
export class CreateDatabaseResponse {
  @ApiProperty() database!: string;
  @ApiProperty() database_id!: string;
  @ApiProperty({ enum: ['provisioning'] }) status!: 'provisioning';
  @ApiProperty() message!: string;
}

/** POST /tenants (deprecated alias): the original SDK's shape. */
export class CreateTenantResponse {
  @ApiProperty({ enum: ['accepted'] }) status!: 'accepted';
  @ApiProperty() tenant_id!: string;
  @ApiProperty() message!: string;
}
