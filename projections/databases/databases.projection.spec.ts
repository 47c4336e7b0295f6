import { createTestDatabase } from '@crs/test/support/test-database';
import { expectIdempotent, project, recorded } from '@crs/test/support/projection-spec';
import { databasesProjection } from './databases.projection';

describe('databases projection', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase('dbproj');
  });

  const id = '11111111-1111-4111-8111-111111111111';
  const created = () => recorded('DatabaseCreated', { databaseId: id, name: 'acme', metadataSchema: [], embedder: { modelId: 'm', dimensions: 3 } });
  const provisioned = (component: string) => recorded('DatabaseComponentProvisioned', { databaseId: id, component });

  it('given creation and all four components, the database is ready (each event delivered twice)', async () => {
    const rows = await expectIdempotent(url, databasesProjection, [
      created(),
      provisioned('scheduler'),
      provisioned('graph'),
      provisioned('vectorstore.knowledge'),
      provisioned('vectorstore.memories'),
      recorded('CollectionCreated', { databaseId: id, collection: 'default' }),
    ]);
    expect(rows.rm_databases).toHaveLength(1);
    expect(rows.rm_databases[0]).toContain(',ready,');
    expect(rows.rm_databases[0]).toMatch(/,t,t,t,t,/);
    expect(rows.rm_collections).toHaveLength(1);
  });

  it('stays provisioning until the last component', async () => {
    const rows = await project(url, databasesProjection, [created(), provisioned('scheduler'), provisioned('graph'), provisioned('vectorstore.knowledge')]);
    expect(rows.rm_databases[0]).toContain(',provisioning,');
  });

  it('given deletion, nothing of the database remains (idempotent)', async () => {
    const rows = await expectIdempotent(url, databasesProjection, [
      created(),
      recorded('CollectionCreated', { databaseId: id, collection: 'c1' }),
      recorded('DatabaseDeletionRequested', { databaseId: id, name: 'acme' }),
      recorded('DatabaseDeleted', { databaseId: id, name: 'acme', requestedBy: 'x', requestedAt: 'y', streamsDeleted: 1, itemsDeleted: 0 }),
    ]);
    expect(rows).toEqual({ rm_databases: [], rm_collections: [] });
  });

  it('collection deletion removes only that collection; it can be created again', async () => {
    const rows = await expectIdempotent(url, databasesProjection, [
      created(),
      recorded('CollectionCreated', { databaseId: id, collection: 'a' }),
      recorded('CollectionCreated', { databaseId: id, collection: 'b' }),
      recorded('CollectionDeletionRequested', { databaseId: id, collection: 'a' }),
      recorded('CollectionDeleted', { databaseId: id, collection: 'a', requestedBy: 'x', requestedAt: 'y', itemsDeleted: 0 }),
    ]);
    expect(rows.rm_collections).toHaveLength(1);
    expect(rows.rm_collections[0]).toContain(',b,');
  });
});

