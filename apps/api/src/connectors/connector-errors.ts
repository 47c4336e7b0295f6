import type { ErrorSpec } from '../http/openapi';

/** The error statuses the connector routes share, for their OpenAPI descriptions. */
export const CONNECTOR_NOT_FOUND: ErrorSpec = [404, "CONNECTOR_NOT_FOUND: no such connector, another organization's, one whose database the key cannot reach, or one being deleted (indistinguishable on purpose)"];
export const RESOURCE_OR_CONNECTOR_NOT_FOUND: ErrorSpec = [404, 'CONNECTOR_NOT_FOUND (as for GET /connectors/{id}); RESOURCE_NOT_FOUND: the connector has no such resource, or it was removed'];
