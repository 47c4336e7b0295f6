import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

/** GET /connectors/providers: `id` describes one provider. */
export class ListProvidersQuery {
  @ApiPropertyOptional({ description: 'A provider id: describes that one provider', example: 'postgres' })
  @IsOptional() @IsString() id?: string;
}
