import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import type { ProviderDescription } from '@crs/connectors/provider.port';
import { notFound } from '@crs/domain/errors';
import { CONNECTOR_PROVIDERS } from '@crs/platform/tokens';

export interface ProviderView {
  id: string;
  name: string;
  credential_fields: { name: string; description: string; required: boolean; secret: boolean }[];
  filterable_fields: { name: string; type: string; description: string }[];
  resource_options: { name: string; description: string }[];
  captures_permissions: boolean;
}

/** The providers this service can connect; `id` describes one (404 PROVIDER_NOT_FOUND when unknown). */
export class ListProviders extends Query<{ providers: ProviderView[] }> {
  constructor(readonly id?: string) {
    super();
  }
}

@QueryHandler(ListProviders)
export class ListProvidersHandler implements IQueryHandler<ListProviders> {
  constructor(@Inject(CONNECTOR_PROVIDERS) private readonly registry: ProviderRegistry) {}

  async execute({ id }: ListProviders): Promise<{ providers: ProviderView[] }> {
    if (id === undefined) return { providers: this.registry.describe().map(providerView) };
    const provider = this.registry.get(id);
    if (!provider) throw notFound('PROVIDER_NOT_FOUND', `provider '${id}' is not known; known providers: ${this.registry.ids().join(', ')}`);
    return { providers: [providerView(provider.description)] };
  }
}

function providerView(d: ProviderDescription): ProviderView {
  return {
    id: d.id,
    name: d.name,
    credential_fields: d.credentialFields.map((f) => ({ name: f.name, description: f.description, required: f.required, secret: f.secret })),
    filterable_fields: d.filterableFields.map((f) => ({ name: f.name, type: f.type, description: f.description })),
    resource_options: d.resourceOptions.map((o) => ({ name: o.name, description: o.description })),
    captures_permissions: d.capturesPermissions,
  };
}
