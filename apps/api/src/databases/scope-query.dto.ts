import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

/** Scope parameters of the /databases and /tenants endpoints (query string or JSON body). */
export class ScopeQuery {
  @ApiPropertyOptional() @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true }) @IsOptional() @IsString() tenant_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() collection?: string;
  @ApiPropertyOptional({ deprecated: true }) @IsOptional() @IsString() sub_tenant_id?: string;
}
