import { ApiProperty } from '@nestjs/swagger';

export class DeleteContextResult {
  @ApiProperty() id!: string;
  @ApiProperty() deleted!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Why the item was not deleted' }) error!: string | null;
}

/** DELETE /context: a result per id. */
export class DeleteContextResponse {
  @ApiProperty({ description: 'At least one item was deleted' }) success!: boolean;
  @ApiProperty() message!: string;
  @ApiProperty({ type: [DeleteContextResult] }) results!: DeleteContextResult[];
  @ApiProperty({ type: 'integer' }) deleted_count!: number;
  @ApiProperty() user_memory_deleted!: boolean;
}
