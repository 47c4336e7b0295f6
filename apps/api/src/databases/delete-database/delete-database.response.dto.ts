import { ApiProperty } from '@nestjs/swagger';

/** DELETE /databases: accepted; the deletion goes on. */
export class DeleteDatabaseResponse {
  @ApiProperty() database!: string;
  @ApiProperty({ enum: ['deleting'] }) status!: 'deleting';
  @ApiProperty() message!: string;
}

/** DELETE /tenants (deprecated alias). */
export class DeleteTenantResponse {
  @ApiProperty() tenant_id!: string;
  @ApiProperty({ enum: ['deleting'] }) status!: 'deleting';
  @ApiProperty() message!: string;
}
