import { ApiProperty } from '@nestjs/swagger';

export class CredentialFieldResponse {
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
  @ApiProperty() required!: boolean;
  @ApiProperty({ description: 'Never shown again once set (GET shows "***")' }) secret!: boolean;
}

export class FilterableFieldResponse {
  @ApiProperty({ description: "The key under a synced document's additional_metadata" }) name!: string;
  @ApiProperty({ enum: ['string', 'number', 'boolean', 'date', 'any'] }) type!: string;
  @ApiProperty() description!: string;
}

export class ResourceOptionResponse {
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
}

export class ProviderResponse {
  @ApiProperty({ example: 'postgres' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: [CredentialFieldResponse] }) credential_fields!: CredentialFieldResponse[];
  @ApiProperty({ type: [FilterableFieldResponse] }) filterable_fields!: FilterableFieldResponse[];
  @ApiProperty({ type: [ResourceOptionResponse], description: 'What a resource may set under options' }) resource_options!: ResourceOptionResponse[];
  @ApiProperty({ description: 'Whether the provider captures source permissions; false: resources use their acl rules only' }) captures_permissions!: boolean;
}

/** GET /connectors/providers: every provider, or the one `?id=` names. */
export class ListProvidersResponse {
  @ApiProperty({ type: [ProviderResponse] }) providers!: ProviderResponse[];
}
