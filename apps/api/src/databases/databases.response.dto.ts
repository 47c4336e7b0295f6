import { ApiProperty } from '@nestjs/swagger';

/** The pieces several database answers share, for the OpenAPI document. */

export class EmbedderDto {
  @ApiProperty({ description: 'Embedding model id' }) model!: string;
  @ApiProperty({ type: 'integer' }) dimensions!: number;
}

export class VectorstoreStatusDto {
  @ApiProperty() knowledge!: boolean;
  @ApiProperty() memories!: boolean;
}

export class MetadataFieldDto {
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['string', 'integer', 'float', 'boolean', 'json', 'array'] }) type!: string;
  @ApiProperty() nullable!: boolean;
  @ApiProperty({ type: 'integer', required: false }) max_length?: number;
}

/** The four provisioning flags of a database. */
export class ProvisioningFlagsDto {
  @ApiProperty() scheduler_status!: boolean;
  @ApiProperty() graph_status!: boolean;
  @ApiProperty({ type: VectorstoreStatusDto }) vectorstore_status!: VectorstoreStatusDto;
}
