import { privateTargetReason } from '@crs/network/public-targets';
import { DocumentError, TargetForbiddenError } from '../../provider-errors';
import type {
  AccountIdentity,
  ConnectorProvider,
  DiscoveredResource,
  ExistingDocument,
  ProviderContext,
  ProviderDescription,
  ResourceConfig,
  ResourcePermission,
  SyncCursor,
  SyncEvent,
} from '../../provider.port';
import { discoverRelations, resolveRelation } from './postgres-catalog';
import { decodeCursor, encodeCursor, SyncPosition } from './postgres-cursor';
import {
  columnSql,
  documentId,
  documentSelectSql,
  DocumentRow,
  hashSql,
  idNotNullSql,
  idOrderSql,
  idParts,
  idSelectSql,
  keyTuple,
  parseDocumentId,
  relationSql,
  RESOURCE_OPTIONS,
  resolveMapping,
  RowMapping,
  rowToDocument,
} from './postgres-mapping';
import { ReconnectingSession, SessionSettings } from './postgres-session';
import { PostgresTarget, refuseOwnDatabase, targetFromCredentials, targetOf } from './postgres-target';

export interface PostgresProviderOptions {
  /** Connection strings of the service's own Postgres databases; credentials that lead to one are refused. */
  ownDatabases: readonly string[];
  /** Rows per page (one query, then a checkpoint), unless a resource sets `page_size` (default 1000). */
  pageSize?: number;
  /** Ids per query when listing what exists (default 10000). */
  listPageSize?: number;
  /** Ids per query when fetching given documents (default 500). */
  fetchBatchSize?: number;
  /** Each query's statement_timeout (default 60 s). */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** A row whose content is larger than this is a `failure` event instead of a document (default 8 MiB). */
  maxDocumentBytes?: number;
  /** Pauses before reconnecting after a connection is lost mid-call; its length is the number of attempts. */
  reconnectDelaysMs?: readonly number[];
  /**
   * Whether a connection string may lead to a loopback, private, link-local or reserved address
   * (CONNECTOR_ALLOW_PRIVATE_NETWORKS; development and tests). Off by default: such a target is refused with a
   * TargetForbiddenError before any connection is tried, and every connection the provider opens checks the addresses
   * it connects to again at connect time (a name may resolve elsewhere by then), so a connector cannot reach the
   * service's own network.
   */
  allowPrivateNetworks?: boolean;
}

export const POSTGRES_PROVIDER: ProviderDescription = {
  id: 'postgres',
  name: 'PostgreSQL database',
  credentialFields: [
    {
      name: 'connection_string',
      description: 'postgres://user:password@host:5432/database, for a role that may SELECT the tables and views to sync. The connector only reads.',
      required: true,
      secret: true,
    },
  ],
  filterableFields: [
    { name: 'schema', type: 'string', description: 'The schema of the row\'s table or view.' },
    { name: 'table', type: 'string', description: 'The table or view the row comes from.' },
    { name: '<column>', type: 'any', description: 'Each column a resource lists in filterable_columns, under its own name.' },
  ],
  resourceOptions: RESOURCE_OPTIONS,
  capturesPermissions: false,
};

/**
 * The database provider: the tables and views of a Postgres database as resources, their rows as documents
 * (docs/connectors.md, "Database provider").
 */
export class PostgresProvider implements ConnectorProvider {
  readonly description = POSTGRES_PROVIDER;
  private readonly own: PostgresTarget[];
  private readonly settings: SessionSettings;
  private readonly pageSize: number;
  private readonly listPageSize: number;
  private readonly fetchBatchSize: number;
  private readonly maxDocumentBytes: number;

  constructor(options: PostgresProviderOptions) {
    this.own = options.ownDatabases.map(targetOf);
    this.settings = {
      statementTimeoutMs: options.statementTimeoutMs ?? 60_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      reconnectDelaysMs: options.reconnectDelaysMs ?? [250, 1000],
      publicOnly: !options.allowPrivateNetworks,
    };
    this.pageSize = options.pageSize ?? 1000;
    this.listPageSize = options.listPageSize ?? 10_000;
    this.fetchBatchSize = options.fetchBatchSize ?? 500;
    this.maxDocumentBytes = options.maxDocumentBytes ?? 8 * 1024 * 1024;
  }

  private async session(ctx: ProviderContext): Promise<{ target: PostgresTarget; session: ReconnectingSession }> {
    const target = targetFromCredentials(ctx.credentials);
    if (this.settings.publicOnly) {
      const reason = await privateTargetReason(target.host);
      if (reason) throw new TargetForbiddenError(`The connection_string leads to ${target.host}, which is not on the public internet (${reason}); connectors may not connect to this service's own network.`);
    }
    await refuseOwnDatabase(target, this.own);
    return { target, session: new ReconnectingSession(target, this.settings) };
  }

  private async mapping(session: ReconnectingSession, resource: ResourceConfig): Promise<RowMapping> {
    const relation = await resolveRelation(session, resource.resourceId);
    return resolveMapping(relation, resource, this.pageSize);
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    const { target, session } = await this.session(ctx);
    try {
      const [row] = await session.query<{ user: string; db: string; superuser: boolean; can_write: boolean }>(
        `SELECT current_user::text AS user, current_database()::text AS db,
                coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false) AS superuser,
                EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE c.relkind IN ('r', 'p') AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
                           AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')) AS can_write`,
      );
      const warnings: string[] = [];
      if (row.superuser) warnings.push(`User "${row.user}" is a superuser. The connector only reads, but a role with SELECT on the tables to sync is safer.`);
      else if (row.can_write) warnings.push(`User "${row.user}" may also change some tables. The connector only reads, but a read-only role is safer.`);
      return { accountScope: `${target.host}:${target.port}/${row.db}`, displayName: `${row.user}@${target.host}:${target.port}/${row.db}`, warnings };
    } finally {
      await session.close();
    }
  }

  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    const { session } = await this.session(ctx);
    try {
      return await discoverRelations(session);
    } finally {
      await session.close();
    }
  }

  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    const { session } = await this.session(ctx);
    try {
      const m = await this.mapping(session, resource);
      const select = documentSelectSql(m);
      let position = decodeCursor(m, cursor);
      // Each page is its own short read-only transaction: between pages the source holds no lock and no snapshot
      // for this sync, however long the caller takes with a page.
      for (;;) {
        ctx.signal?.throwIfAborted();
        const { sql, params } = pageQuery(m, select, position);
        const rows = await session.query<DocumentRow>(sql, params, resource.resourceId);
        for (const row of rows) yield this.event(m, row);
        const { next, done } = advance(m, position, rows);
        position = next;
        // An empty page that only moves on to the next part commits nothing; the end of a sync always checkpoints.
        if (rows.length > 0 || done) yield { kind: 'checkpoint', cursor: encodeCursor(m, position) };
        if (done) return;
      }
    } finally {
      await session.close();
    }
  }

  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    const { session } = await this.session(ctx);
    try {
      const m = await this.mapping(session, resource);
      let after: string[] | null = null;
      for (;;) {
        ctx.signal?.throwIfAborted();
        const key = keyTuple(m.idColumns, 1);
        const where = [idNotNullSql(m), ...(after ? [`${key.columns} > ${key.params}`] : [])].join(' AND ');
        const rows = await session.query<DocumentRow>(
          `SELECT ${idSelectSql(m)}, ${hashSql(m)} AS "__hash" FROM ${relationSql(m)} t WHERE ${where} ORDER BY ${idOrderSql(m)} LIMIT ${this.listPageSize}`,
          after ?? [],
          resource.resourceId,
        );
        for (const row of rows) yield { id: documentId(idParts(m, row)), contentHash: row.__hash as string };
        if (rows.length < this.listPageSize) return;
        after = idParts(m, rows[rows.length - 1]);
      }
    } finally {
      await session.close();
    }
  }

  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    const { session } = await this.session(ctx);
    try {
      const m = await this.mapping(session, resource);
      const select = documentSelectSql(m);
      for (let i = 0; i < ids.length; i += this.fetchBatchSize) {
        ctx.signal?.throwIfAborted();
        const batch = ids.slice(i, i + this.fetchBatchSize);
        const parsed = batch.map((id) => ({ id, parts: parseDocumentId(m, id) }));
        const valid = parsed.filter((p): p is { id: string; parts: string[] } => p.parts !== undefined);
        const found = new Set<string>();
        if (valid.length > 0) {
          const columns = m.idColumns.map((_, j) => `x.c${j}::${m.idColumns[j].type}`).join(', ');
          const unnest = m.idColumns.map((_, j) => `$${j + 1}::text[]`).join(', ');
          const names = m.idColumns.map((_, j) => `c${j}`).join(', ');
          const rows = await session.query<DocumentRow>(
            `SELECT ${select} FROM ${relationSql(m)} t
              WHERE ${idNotNullSql(m)} AND (${idOrderSql(m)}) IN (SELECT ${columns} FROM unnest(${unnest}) AS x(${names}))`,
            m.idColumns.map((_, j) => valid.map((v) => v.parts[j])),
            resource.resourceId,
          );
          for (const row of rows) {
            const event = this.event(m, row);
            found.add(event.kind === 'upsert' ? event.doc.id : event.id);
            yield event;
          }
        }
        for (const { id } of parsed) if (!found.has(id)) yield { kind: 'delete', id };
      }
    } finally {
      await session.close();
    }
  }

  /** The database provider captures no permissions (rule 11): resources use their `acl` rules only. */
  async capturePermissions(): Promise<ResourcePermission> {
    return { status: 'off' };
  }

  private event(m: RowMapping, row: DocumentRow): Exclude<SyncEvent, { kind: 'checkpoint' } | { kind: 'delete' }> {
    const doc = rowToDocument(m, row);
    const bytes = doc.content.kind === 'text' ? Buffer.byteLength(doc.content.text) : doc.content.bytes.byteLength;
    if (bytes > this.maxDocumentBytes) {
      return {
        kind: 'failure',
        id: doc.id,
        error: new DocumentError(`Row ${doc.id} of ${m.relation.resourceId} makes ${bytes} bytes of content, more than the ${this.maxDocumentBytes} a document may have; body_columns can leave large columns out.`),
      };
    }
    return { kind: 'upsert', doc };
  }
}

/**
 * The next page of the current part of a sync, in keyset order: a position is the last (update column, id) or id
 * taken, so the query resumes right after it whatever happened to the rows before.
 */
function pageQuery(m: RowMapping, select: string, p: SyncPosition): { sql: string; params: unknown[] } {
  const where = [idNotNullSql(m)];
  let order = idOrderSql(m);
  let params: unknown[] = [];
  if (p.phase === 'dated') {
    const u = columnSql(m.updateColumn!);
    const key = keyTuple([m.updateColumn!, ...m.idColumns], 1);
    where.push(`${u} IS NOT NULL`);
    if (p.dated) {
      where.push(`${key.columns} > ${key.params}`);
      params = [p.dated.u, ...p.dated.k];
    }
    order = `${u}, ${order}`;
  } else {
    if (p.phase === 'nulls') where.push(`${columnSql(m.updateColumn!)} IS NULL`);
    if (p.after) {
      const key = keyTuple(m.idColumns, 1);
      where.push(`${key.columns} > ${key.params}`);
      params = p.after;
    }
  }
  return { sql: `SELECT ${select} FROM ${relationSql(m)} t WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${m.pageSize}`, params };
}

/** The position after a page, and whether the sync is complete. A page shorter than the page size ends its part. */
function advance(m: RowMapping, p: SyncPosition, rows: DocumentRow[]): { next: SyncPosition; done: boolean } {
  const last = rows[rows.length - 1];
  const exhausted = rows.length < m.pageSize;
  if (p.phase === 'dated') {
    const dated = last ? { u: last.__u as string, k: idParts(m, last) } : p.dated;
    // A complete sync starts the next one at the NULL rows again, and the dated rows where this one stopped.
    return exhausted ? { next: { phase: 'nulls', after: null, dated }, done: true } : { next: { ...p, dated }, done: false };
  }
  if (!exhausted) return { next: { ...p, after: idParts(m, last) }, done: false };
  if (p.phase === 'nulls') return { next: { phase: 'dated', after: null, dated: p.dated }, done: false };
  return { next: { phase: 'all', after: null, dated: null }, done: true };
}
