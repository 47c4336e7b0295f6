import { ApiProperty } from '@nestjs/swagger';
import { VectorstoreStatusDto } from '../databases.response.dto';

/** GET /databases/status: the four flags, each true once its part is provisioned. */
export class DatabaseStatusResponse {
  @ApiProperty() database!: string;
  @ApiProperty({ enum: ['provisioning', 'ready'] }) status!: string;
  @ApiProperty() scheduler_status!: boolean;
  @ApiProperty() graph_status!: boolean;
  @ApiProperty({ type: VectorstoreStatusDto }) vectorstore_status!: VectorstoreStatusDto;
  @ApiProperty({ description: 'All four flags are true' }) provisioned!: boolean;
}

export class TenantInfraDto {
  @ApiProperty() scheduler_status!: boolean;
  @ApiProperty() graph_status!: boolean;
  @ApiProperty({ type: VectorstoreStatusDto }) vectorstore_status!: VectorstoreStatusDto;
  @ApiProperty() ready_for_ingestion!: boolean;
}

/** GET /tenants/status (deprecated alias): the original SDK's shape, flags under infra. */
export class TenantStatusResponse {
  @ApiProperty() tenant_id!: string;
  @ApiProperty() org_id!: string;
  @ApiProperty({ type: TenantInfraDto }) infra!: TenantInfraDto;
  @ApiProperty({ enum: ['ready', 'provisioning'] }) message!: string;
}
