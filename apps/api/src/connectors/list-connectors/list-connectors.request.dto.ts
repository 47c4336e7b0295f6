import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

/** GET /connectors: optionally the connectors of one database. */
export class ListConnectorsQuery {
  @ApiPropertyOptional({ description: 'Only the connectors of this database' }) @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' }) @IsOptional() @IsString() tenant_id?: string;
}
