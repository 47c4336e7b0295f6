import { ApiProperty } from '@nestjs/swagger';

/** DELETE /databases/collections: accepted; the deletion goes on. */
export class DeleteCollectionResponse {
  @ApiProperty() database!: string;
  @ApiProperty() collection!: string;
  @ApiProperty({ enum: ['deleting'] }) status!: 'deleting';
  @ApiProperty() message!: string;
}
