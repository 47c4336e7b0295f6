import { ApiProperty } from '@nestjs/swagger';
import { ResourceResponse } from '../connector.response.dto';

/** POST /connectors/{id}/resources: the resource as added or replaced. */
export class AddResourceResponse extends ResourceResponse {
  @ApiProperty({ description: 'An existing resource was replaced (omitted fields cleared, synced again from the beginning)' }) replaced!: boolean;
}
