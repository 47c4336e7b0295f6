/** Injection tokens for the infrastructure objects built outside Nest (shared with the CLI). */
export const APP_CONFIG = 'crs:config';
export const DATA_SOURCE = 'crs:data-source';
export const EVENT_STORE = 'crs:event-store';
export const PROJECTION_RUNNER = 'crs:projection-runner';
export const API_KEYS = 'crs:api-keys';
export const RATE_LIMITER = 'crs:rate-limiter';
export const DATABASE_DIRECTORY = 'crs:database-directory';
export const INFRASTRUCTURE = 'crs:infrastructure';
