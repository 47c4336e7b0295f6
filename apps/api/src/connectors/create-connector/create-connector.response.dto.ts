import { ApiProperty } from '@nestjs/swagger';
import { ConnectorResponse } from '../connector.response.dto';

export class ConnectedAccountResponse {
  @ApiProperty({ description: 'Who the credentials are at the provider' }) display_name!: string;
  @ApiProperty({ type: [String], description: 'Things to know that do not stop the connector (a role with more rights than it needs)' }) warnings!: string[];
}

/** POST /connectors: the new connector, and the account its credentials reached. */
export class CreateConnectorResponse extends ConnectorResponse {
  @ApiProperty({ type: ConnectedAccountResponse }) account!: ConnectedAccountResponse;
}
