import { ApiProperty } from '@nestjs/swagger';
import { ConnectorResponse } from '../connector.response.dto';

/** GET /connectors: the connectors the key may see, oldest first. */
export class ListConnectorsResponse {
  @ApiProperty({ type: [ConnectorResponse] }) connectors!: ConnectorResponse[];
}
