/**
 * The custom ingestion instructions a resource's documents are synced under: the resource's own value if non-empty,
 * otherwise the connector's if non-empty, otherwise none. A resource value replaces the connector's (no merging).
 */
export function effectiveInstructions(resource: string | null | undefined, connector: string | null | undefined): string | null {
  if (resource) return resource;
  if (connector) return connector;
  return null;
}
