import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsNotEmpty, IsOptional, IsString } from 'class-validator';

const IDS = 'ids must be an array of 1 to 100 ids';

/** DELETE /context: which items to delete. The scope may come in the query string instead (the two must agree). */
export class DeleteContextRequest {
  @ApiPropertyOptional() @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' }) @IsOptional() @IsString() tenant_id?: string;
  @ApiPropertyOptional({ description: 'Default collection when omitted' }) @IsOptional() @IsString() collection?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' }) @IsOptional() @IsString() sub_tenant_id?: string;

  @ApiProperty({ type: [String], minItems: 1, maxItems: 100, description: 'Item ids; repeated ids count once' })
  @IsArray({ message: IDS }) @ArrayMinSize(1, { message: IDS }) @ArrayMaxSize(100, { message: IDS }) @IsString({ each: true, message: IDS }) @IsNotEmpty({ each: true, message: IDS })
  ids!: string[];

  @ApiPropertyOptional({ enum: ['memory', 'knowledge'], description: 'Needed only when both stores hold an item with the id' })
  @IsOptional() @IsIn(['memory', 'knowledge'], { message: "type must be 'memory' or 'knowledge'" })
  type?: 'memory' | 'knowledge';
}
