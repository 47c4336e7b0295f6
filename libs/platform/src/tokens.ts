import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '@crs/config';
import type { StepClock } from '@crs/domain/step-clock';
import type { Embedder, VectorSpaces } from '@crs/embeddings';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import type { ApiKeyRepository } from '@crs/persistence/api-keys';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { DatabaseResources } from '@crs/persistence/database-resources';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import type { RateLimiter } from '@crs/persistence/rate-limiter';
import type { QueryRetention } from '@crs/processors/query-retention';
import type { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import type { SearchIndex } from '@crs/search/search-index.port';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import type { ConnectorScheduler } from '@crs/connector-sync/connector-scheduler';
import type { ResourceSync } from '@crs/connector-sync/resource-sync';
import type { SigningSecretVault } from '@crs/webhooks/signing-secret-vault';
import type { WebhookDispatcher } from '@crs/webhooks/webhook-dispatcher';
import type { WebhookSender } from '@crs/webhooks/webhook-sender';
import type { WebhookUrlGuard } from '@crs/webhooks/webhook-url-guard';

/**
 * An injection token that names what it provides: Nest injects by it (`@Inject(EVENT_STORE) store: EventStore`), and
 * `platform.get(EVENT_STORE)` is typed by it. A string, so a missing provider's error names it.
 */
export type Token<T> = string & { readonly __provides?: T };
const token = <T>(name: string): Token<T> => name as Token<T>;

/** The settings of this process, read and checked at start (libs/config), with the embedder it runs filled in. */
export const APP_CONFIG = token<AppConfig>('crs:config');
/** Postgres for read models, checkpoints and keys (TypeORM; its queries live in projections/<name>/<name>.queries.ts). */
export const DATA_SOURCE = token<DataSource>('crs:data-source');
/** The pg pool of the Postgres event log, blob rows and the embedding cache. */
export const POSTGRES_POOL = token<Pool>('crs:postgres-pool');
export const EVENT_STORE = token<EventStore>('crs:event-store');
/** Runs every projection and processor from the log; commands wait on it for read-your-writes. */
export const PROJECTION_RUNNER = token<ProjectionRunner>('crs:projection-runner');
export const API_KEYS = token<ApiKeyRepository>('crs:api-keys');
export const RATE_LIMITER = token<RateLimiter>('crs:rate-limiter');
/** Content-addressed payloads (Postgres rows for small ones, files under DATA_DIR/blobs). */
export const BLOB_STORE = token<BlobStore>('crs:blob-store');
/** The configured embedder. */
export const EMBEDDER = token<Embedder>('crs:embedder');
/** The configured embedder, and the embedding cache for indexes of another model (a re-embed in progress). */
export const VECTOR_SPACES = token<VectorSpaces>('crs:vector-spaces');
/** Which search index serves which database and store. */
export const SEARCH_CATALOG = token<SearchCatalog>('crs:search-catalog');
/** The search engine (LanceDB or Elasticsearch) behind the catalog. */
export const SEARCH_INDEX = token<SearchIndex>('crs:search-index');
/** The physical parts of each database outside the log: provisioned on creation, purged on deletion. */
export const DATABASE_RESOURCES = token<DatabaseResources>('crs:database-resources');
export const INDEXING_PIPELINE = token<IndexingPipeline>('crs:indexing-pipeline');
export const WEBHOOK_URL_GUARD = token<WebhookUrlGuard>('crs:webhook-url-guard');
export const SIGNING_SECRET_VAULT = token<SigningSecretVault>('crs:signing-secret-vault');
export const WEBHOOK_SENDER = token<WebhookSender>('crs:webhook-sender');
/** Sends due webhook deliveries from the outbox, retries, and appends what happened (docs/webhooks.md). */
export const WEBHOOK_DISPATCHER = token<WebhookDispatcher>('crs:webhook-dispatcher');
/** Removes recorded queries past their retention (docs/operations.md). */
export const QUERY_RETENTION = token<QueryRetention>('crs:query-retention');
/** Where /query time goes, per step (exposed on /metrics as crs_query_step_*; docs/retrieval.md). */
export const QUERY_STEP_CLOCK = token<StepClock>('crs:query-step-clock');
/** The connector providers this service can connect, by id (docs/connectors.md). */
export const CONNECTOR_PROVIDERS = token<ProviderRegistry>('crs:connector-providers');
/** Connector credentials, sealed at rest. */
export const CONNECTOR_CREDENTIALS = token<ConnectorCredentialVault>('crs:connector-credentials');
/** "Sync now" requests, taken by the connector scheduler. */
export const CONNECTOR_SYNC_REQUESTS = token<SyncRequests>('crs:connector-sync-requests');
/** Runs one resource's sync (docs/connectors.md, "Sync engine"). */
export const CONNECTOR_SYNC = token<ResourceSync>('crs:connector-sync');
/** Starts due and requested syncs in the worker role, with leases in the log. */
export const CONNECTOR_SCHEDULER = token<ConnectorScheduler>('crs:connector-scheduler');
