import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { callerPrincipals, isVisible, normalizeDocumentAcl } from '@crs/domain/acl';
import type { PermissionCapture } from '@crs/domain/connectors/access-precedence';
import { initialConnector, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import { initialResource, type ResourceState } from '@crs/domain/connectors/resource.decider';
import { syncedAccess } from '@crs/domain/connectors/synced-access';
import { openDataSource } from '@crs/persistence/data-source';
import { createTestDatabase } from '@crs/test/support/test-database';
import { connectorsProjection } from '@crs/projections/connectors/connectors.projection';
import { databasesProjection } from '@crs/projections/databases/databases.projection';
import { itemsProjection } from './items.projection';
import { itemAccess, itemsToCheck, listItems } from './items.queries';

/**
 * The read model decides a synced document's access in SQL (connectors.queries.ts, through `itemAccess` and
 * `itemsToCheck`); the domain decides it with `syncedAccess` over `effectiveAccess`. On random per-document
 * permissions, resource and connector states, document rules and callers, the SQL must give exactly the domain's
 * answer: the same ACL, the same served or not, and the same visibility in the list filter and the query check.
 */

const acl = fc
  .oneof(
    fc.constant([] as string[]),
    fc.subarray(['user_email:ann@corp.io', 'user_email:bob@corp.io', 'domain:corp.io', 'group:slack:eng', '__public__', '__private__'], { minLength: 1 }),
  )
  .map((raw) => normalizeDocumentAcl(raw, true)!);
const capture: fc.Arbitrary<PermissionCapture> = fc.oneof(
  fc.constant({ status: 'off' as const }),
  fc.record({ status: fc.constant('captured' as const), acl: fc.option(acl, { nil: null }) }),
  fc.record({ status: fc.constant('captured' as const), acl: fc.constant(null), unresolved: fc.constantFrom(2, 1200) }),
  fc.constant({ status: 'failed' as const }),
  fc.record({ status: fc.constant('failed' as const), last: fc.record({ acl: fc.option(acl, { nil: null }) }) }),
  fc.record({ status: fc.constant('failed' as const), last: fc.record({ acl: fc.constant(null), unresolved: fc.constantFrom(2, 1200) }) }),
);
const settings = (rule: string[] | null) => ({ resourceType: 'channel', name: 'n', collection: null, metadata: null, additionalMetadata: null, options: null, acl: rule, customInstructions: null });
const resource: fc.Arbitrary<ResourceState | null> = fc.option(
  fc.record({ phase: fc.constantFrom('live' as const, 'removed' as const), rule: fc.option(acl, { nil: null }), permission: fc.option(capture, { nil: null }), policy: fc.constantFrom('delete' as const, 'keep' as const) }).map(
    ({ phase, rule, permission, policy }) => ({ ...initialResource(), phase, generation: 1, settings: settings(rule), permission, hadAclRule: rule !== null, contentPolicy: phase === 'removed' ? policy : null }),
  ),
  { nil: null, freq: 8 },
);
const connector: fc.Arbitrary<ConnectorState | null> = fc.option(
  fc.record({ phase: fc.constantFrom('live' as const, 'live' as const, 'deleting' as const, 'deleted' as const), policy: fc.constantFrom('delete' as const, 'keep' as const), paused: fc.boolean() }).map(({ phase, policy, paused }) => ({
    ...initialConnector(),
    phase,
    paused,
    contentPolicy: phase === 'live' ? null : policy,
  })),
  { nil: null, freq: 8 },
);
const synced = fc.record({ document: fc.option(capture, { nil: undefined }), documentRule: fc.option(acl, { nil: undefined }), resource, connector });
const callerEntry = fc.constantFrom('ann@corp.io', 'bob@corp.io', 'eve@else.org', 'group:slack:eng', '__private__', 'nobody');
const caller = fc.option(fc.array(callerEntry, { maxLength: 3 }), { nil: undefined });

describe('synced document access: the SQL agrees with syncedAccess (effectiveAccess)', () => {
  let ds: DataSource;
  const databaseId = randomUUID();
  beforeAll(async () => {
    const url = await createTestDatabase('syncedacl');
    ds = await openDataSource(url, { schema: `spec_${randomBytes(4).toString('hex')}`, poolSize: 1, name: 'crs-spec' });
    for (const p of [databasesProjection, itemsProjection, connectorsProjection]) for (const ddl of p.ddl) await ds.query(ddl);
    await ds.query(`INSERT INTO rm_collections (database_id, name, status, created_at, updated_at) VALUES ($1, 'default', 'active', now(), now())`, [databaseId]);
  });
  afterAll(async () => {
    await ds?.destroy();
  });

  it('on random permissions, rules, resource and connector states and callers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(synced, { minLength: 1, maxLength: 25 }), caller, async (cases, callerRaw) => {
        await ds.query('TRUNCATE rm_items, rm_connectors, rm_connector_resources');
        const keys = cases.map((_, n) => `k${n}`);
        for (const [n, c] of cases.entries()) {
          const connectorId = randomUUID();
          if (c.connector) await ds.query(`INSERT INTO rm_connectors (connector_id, org_id, provider, database_id, state, created_at, updated_at, position) VALUES ($1, 'o', 'slack', $2, $3, now(), now(), 1)`, [connectorId, databaseId, JSON.stringify(c.connector)]);
          if (c.resource) {
            await ds.query(
              `INSERT INTO rm_connector_resources (connector_id, resource_id, org_id, phase, generation, state, created_at, updated_at, position) VALUES ($1, 'res', 'o', $2, 1, $3, now(), now(), 1)`,
              [connectorId, c.resource.phase, JSON.stringify(c.resource)],
            );
          }
          await ds.query(
            `INSERT INTO rm_items (database_id, item_key, collection, store, item_id, kind, source_type, content_sha256, content_type, bytes, pairs, is_markdown, infer,
               metadata, additional_metadata, relations, acl, content_version, ingest_position, status, created_at, updated_at, connector_id, resource_id, provider_permission)
             VALUES ($1, $2, 'default', 'knowledge', $2, 'app', 'app', 'x', 'text/plain', 1, false, false, false, '{}', '{}', '[]', $3, 1, $4, 'completed', now(), now(), $5, 'res', $6)`,
            [databaseId, keys[n], c.documentRule === undefined ? null : JSON.stringify(c.documentRule), n + 1, connectorId, c.document === undefined ? null : JSON.stringify(c.document)],
          );
        }
        const access = itemAccess('i', { inferred: true });
        const rows: { item_key: string; acl: string[] | null; served: boolean }[] = await ds.query(`SELECT i.item_key, ${access.acl} AS acl, ${access.served} AS served FROM rm_items i ${access.joins}`);
        const got = new Map(rows.map((r) => [r.item_key, r]));
        const principals = callerPrincipals(callerRaw);
        const expectedVisible: string[] = [];
        for (const [n, c] of cases.entries()) {
          const want = syncedAccess(c);
          const row = got.get(keys[n])!;
          expect({ served: row.served, acl: row.served ? row.acl : 'withdrawn' }).toEqual({ served: want.served, acl: want.served ? (want.acl ?? null) : 'withdrawn' });
          if (want.served && isVisible(want.acl, principals)) expectedVisible.push(keys[n]);
        }
        // The query path's check and the list filter, with this caller.
        const checked = await itemsToCheck(ds, databaseId, keys);
        const checkVisible = checked.filter((r) => isVisible(r.acl, principals)).map((r) => r.item_key);
        expect(checkVisible.sort()).toEqual([...expectedVisible].sort());
        const listed = await listItems(ds, { databaseId, collection: 'default', store: 'knowledge', caller: principals, filters: [], page: 1, pageSize: 100 });
        expect(listed.rows.map((r) => r.item_key).sort()).toEqual([...expectedVisible].sort());
        expect(listed.total).toBe(expectedVisible.length);
      }),
      { numRuns: 60 },
    );
  });
});
