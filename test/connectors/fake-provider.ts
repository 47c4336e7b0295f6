import { createHash } from 'node:crypto';
import { AuthError, type ProviderError, RateLimitedError } from '@crs/connectors/provider-errors';
import type {
  AccountIdentity,
  ConnectorProvider,
  DiscoveredResource,
  ExistingDocument,
  PermissionCapture,
  ProviderContext,
  ProviderDescription,
  ResourceConfig,
  ResourcePermission,
  SyncCursor,
  SyncedDocument,
  SyncEvent,
} from '@crs/connectors/provider.port';

/** One document of the fake source. `seq` moves with every change, content or permission (a changes feed). */
interface FakeDocument {
  id: string;
  title: string;
  text: string;
  kind: string;
  permission?: PermissionCapture;
  seq: number;
  /** the last change was to the permission alone */
  permissionOnly?: boolean;
}

/**
 * A scriptable provider for the conformance suite: documents per resource, fed in pages of `pageSize` ordered by a
 * change sequence (a permission change moves it too, as a drive's changes feed does); deletions are not in the feed,
 * so pruning has to find them. Scripts: `rateLimitNext` (429 with Retry-After), `failNext` (any provider error),
 * `revoke` (401 for the current token), `resourcePermission` (the resource-level verdict, or a failing capture).
 */
export class FakeProvider implements ConnectorProvider {
  readonly description: ProviderDescription = {
    id: 'fake',
    name: 'Fake source',
    credentialFields: [{ name: 'token', description: 'any token the fake accepts', required: true, secret: true }],
    filterableFields: [{ name: 'kind', type: 'string', description: 'the document kind' }],
    resourceOptions: [],
    capturesPermissions: true,
  };

  pageSize = 2;
  /** Report a permission-only change as a `permission` event (a source whose feed says so) instead of an upsert. */
  permissionEvents = false;
  private seq = 0;
  private readonly resources = new Map<string, Map<string, FakeDocument>>();
  /** errors to throw, each after `skip` more calls succeed */
  private readonly scripted: { skip: number; error: ProviderError }[] = [];
  private validTokens = new Set(['good-token']);
  resourcePermission: ResourcePermission | 'fail' = { status: 'captured', acl: null };
  /** pages served by `sync` (all resources) */
  pagesServed = 0;
  /** how long each page of `sync` takes to arrive (a slow source) */
  pageDelayMs = 0;
  /** syncs iterating now, and the most at once */
  activeSyncs = 0;
  maxActiveSyncs = 0;

  private docs(resourceId: string): Map<string, FakeDocument> {
    let docs = this.resources.get(resourceId);
    if (!docs) this.resources.set(resourceId, (docs = new Map()));
    return docs;
  }

  put(resourceId: string, id: string, text: string, opts: { title?: string; kind?: string; permission?: PermissionCapture } = {}): void {
    const docs = this.docs(resourceId);
    const before = docs.get(id);
    docs.set(id, { id, title: opts.title ?? before?.title ?? `Document ${id}`, text, kind: opts.kind ?? before?.kind ?? 'note', permission: opts.permission ?? before?.permission, seq: ++this.seq });
  }

  setPermission(resourceId: string, id: string, permission: PermissionCapture): void {
    const doc = this.docs(resourceId).get(id);
    if (!doc) throw new Error(`no document ${id}`);
    this.docs(resourceId).set(id, { ...doc, permission, seq: ++this.seq, permissionOnly: true });
  }

  remove(resourceId: string, id: string): void {
    this.docs(resourceId).delete(id);
  }

  ids(resourceId: string): string[] {
    return [...this.docs(resourceId).keys()];
  }

  /** A call answers 429 with a Retry-After that ends at `retryAt`, after `afterCalls` more calls succeed. */
  rateLimit(retryAt: Date, afterCalls = 0): void {
    this.scripted.push({ skip: afterCalls, error: new RateLimitedError(`429 Too Many Requests (Retry-After until ${retryAt.toISOString()})`, retryAt) });
  }

  /** A call fails with `error` after `afterCalls` more calls succeed. */
  fail(error: ProviderError, afterCalls = 0): void {
    this.scripted.push({ skip: afterCalls, error });
  }

  revoke(token: string): void {
    this.validTokens.delete(token);
  }

  accept(token: string): void {
    this.validTokens.add(token);
  }

  private call(ctx: ProviderContext): void {
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    if (!this.validTokens.has(String(ctx.credentials.token))) throw new AuthError('401 Unauthorized: the token was revoked');
    const next = this.scripted[0];
    if (next && next.skip-- <= 0) {
      this.scripted.shift();
      throw next.error;
    }
  }

  private document(d: FakeDocument): SyncedDocument {
    return {
      id: d.id,
      title: d.title,
      content: { kind: 'text', text: d.text },
      updatedAt: null,
      contentHash: createHash('sha256').update(`${d.title}\u0000${d.text}\u0000${d.kind}`).digest('hex'),
      metadata: { source: 'fake' },
      filterableFields: { kind: d.kind },
      ...(d.permission ? { permission: d.permission } : {}),
    };
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    this.call(ctx);
    return { accountScope: 'fake-account', displayName: 'Fake', warnings: [] };
  }

  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    this.call(ctx);
    return [...this.resources.keys()].map((id) => ({ resourceId: id, resourceType: 'folder', name: id, details: {} }));
  }

  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    this.maxActiveSyncs = Math.max(this.maxActiveSyncs, ++this.activeSyncs);
    try {
      yield* this.pages(ctx, resource, cursor);
    } finally {
      this.activeSyncs--;
    }
  }

  private async *pages(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    let after = cursor === null ? 0 : Number(JSON.parse(cursor).seq);
    for (;;) {
      if (this.pageDelayMs) await new Promise((r) => setTimeout(r, this.pageDelayMs));
      this.call(ctx);
      const page = [...this.docs(resource.resourceId).values()]
        .filter((d) => d.seq > after)
        .sort((a, b) => a.seq - b.seq)
        .slice(0, this.pageSize);
      this.pagesServed++;
      for (const d of page) {
        // a full sync (no cursor) lists documents; only a feed read from a position says what alone changed
        if (this.permissionEvents && d.permissionOnly && cursor !== null) yield { kind: 'permission', id: d.id, permission: d.permission ?? { status: 'captured', acl: null } };
        else yield { kind: 'upsert', doc: this.document(d) };
      }
      if (page.length) after = page[page.length - 1].seq;
      yield { kind: 'checkpoint', cursor: JSON.stringify({ seq: after }) };
      if (page.length < this.pageSize) return;
    }
  }

  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    this.call(ctx);
    for (const d of this.docs(resource.resourceId).values()) yield { id: d.id, contentHash: this.document(d).contentHash };
  }

  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    this.call(ctx);
    for (const id of ids) {
      const d = this.docs(resource.resourceId).get(id);
      yield d ? { kind: 'upsert', doc: this.document(d) } : { kind: 'delete', id };
    }
  }

  async capturePermissions(ctx: ProviderContext): Promise<ResourcePermission> {
    this.call(ctx);
    if (this.resourcePermission === 'fail') throw new Error('the permission API failed');
    return this.resourcePermission;
  }
}
