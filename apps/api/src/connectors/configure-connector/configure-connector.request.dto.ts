import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { ResourceInputDto } from '../resource-input';

/** The most resources one configure takes. */
export const MAX_CONFIGURE_RESOURCES = 500;

/** POST /connectors/{id}/configure. */
export class ConfigureConnectorRequest {
  @ApiProperty({ type: [ResourceInputDto], minItems: 1, maxItems: MAX_CONFIGURE_RESOURCES, description: 'Resources to activate or configure again; resources not listed are untouched' })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_CONFIGURE_RESOURCES) @ValidateNested({ each: true }) @Type(() => ResourceInputDto)
  resources!: ResourceInputDto[];
}
