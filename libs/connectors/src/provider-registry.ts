import type { ConnectorProvider, ProviderDescription } from './provider.port';

/**
 * The providers this service can connect, by id (`provider` of a connector). The platform registers the built-in ones;
 * tests add fakes. An unknown id is the caller's error (the API answers 400 naming the known ones).
 */
export class ProviderRegistry {
  private readonly providers = new Map<string, ConnectorProvider>();

  constructor(providers: Iterable<ConnectorProvider> = []) {
    for (const p of providers) this.register(p);
  }

  register(provider: ConnectorProvider): void {
    this.providers.set(provider.description.id, provider);
  }

  get(id: string): ConnectorProvider | undefined {
    return this.providers.get(id);
  }

  ids(): string[] {
    return [...this.providers.keys()].sort();
  }

  describe(): ProviderDescription[] {
    return this.ids().map((id) => this.providers.get(id)!.description);
  }
}
