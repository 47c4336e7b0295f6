import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { type ChunkDoc, LanceDbSearchIndex } from '../../libs/search/src';
import { searchIndexContract, seededRandom } from './search-index.contract';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'crs-lance-'));
}

searchIndexContract('lancedb', async () => {
  const dir = tempDir();
  return {
    index: new LanceDbSearchIndex({ dir }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

function doc(i: number, vector: number[], text = `row ${i}`): ChunkDoc {
  return {
    chunkId: `r_${String(i).padStart(5, '0')}`,
    itemId: `item_${i}`,
    store: 'knowledge',
    collection: `c${i % 4}`,
    title: null,
    text,
    vector,
    principals: null,
    metadata: {},
    additionalMetadata: {},
    sourceType: 'file',
    isApp: false,
    createdAt: 1,
    updatedAt: 1,
    expiresAt: null,
    version: 1,
  };
}

/** Poll a condition without sleeping blindly; fail after a bound. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('LanceDbSearchIndex (engine specifics)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const newDir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };

  it('builds an IVF_FLAT cosine index past the size threshold and still finds the exact nearest', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, vectorIndexThreshold: 300, indexRefreshDelayMs: -1 });
    const random = seededRandom(3);
    const docs = Array.from({ length: 400 }, (_, i) => doc(i, Array.from({ length: 16 }, () => random() * 2 - 1)));
    await index.createIndex('ivf', { dimensions: 16 });
    await index.upsert('ivf', docs);
    await index.optimize('ivf');

    const db = await connect(dir);
    const table = await db.openTable('ivf');
    const indices = await table.listIndices();
    expect(indices.map((i) => [i.name, i.indexType]).sort()).toEqual([
      ['fts_text_idx', 'FTS'],
      ['vector_idx', 'IvfFlat'],
    ]);
    table.close();
    db.close();

    for (const i of [0, 123, 399]) {
      const hits = await index.vectorSearch('ivf', docs[i].vector, { limit: 3, filter: { collections: [docs[i].collection] } });
      expect(hits[0].chunkId).toBe(docs[i].chunkId);
      expect(hits[0].score).toBeCloseTo(1, 5);
    }
    // Rows written after the index was built are searched too.
    await index.upsert('ivf', [doc(1000, Array.from({ length: 16 }, (_, k) => (k === 3 ? 1 : 0)))]);
    expect((await index.vectorSearch('ivf', Array.from({ length: 16 }, (_, k) => (k === 3 ? 1 : 0)), { limit: 1 }))[0].chunkId).toBe('r_01000');
    await index.close();
  });

  it('folds new rows into the full-text index in the background after writes', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 20 });
    await index.createIndex('bg', { dimensions: 2 });
    await index.upsert('bg', [doc(1, [1, 0], 'background indexing works')]);
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable('bg');
    expect((await table.indexStats('fts_text_idx'))?.numUnindexedRows).toBe(1);
    await eventually(async () => (await table.indexStats('fts_text_idx'))?.numUnindexedRows === 0);
    expect((await table.indexStats('fts_text_idx'))?.numIndexedRows).toBe(1);
    table.close();
    db.close();
    expect((await index.keywordSearch('bg', 'indexing', { limit: 1 }))[0].chunkId).toBe('r_00001');
    await index.close();
  });

  it('sees writes made by another instance (another process) on the same directory', async () => {
    const dir = newDir();
    const writer = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    const reader = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await writer.createIndex('shared', { dimensions: 2 });
    expect(await reader.count('shared')).toBe(0); // the reader now holds an open table handle
    await writer.upsert('shared', [doc(1, [1, 0], 'shared table')]);
    expect(await reader.count('shared')).toBe(1);
    expect((await reader.keywordSearch('shared', 'shared', { limit: 1 }))[0].chunkId).toBe('r_00001');
    await writer.deleteItems('shared', ['item_1'], 1);
    expect(await reader.count('shared')).toBe(0);
    await writer.close();
    await reader.close();
  });

  it('survives two instances (processes) creating the same index at once', async () => {
    const dir = newDir();
    const instances = [1, 2, 3].map(() => new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 }));
    await Promise.all(instances.map((index) => index.createIndex('both', { dimensions: 2 })));
    await instances[0].upsert('both', [doc(1, [1, 0], 'created twice')]);
    for (const index of instances) expect((await index.keywordSearch('both', 'twice', { limit: 1 }))[0].chunkId).toBe('r_00001');
    await Promise.all(instances.map((index) => index.close()));
  });

  it('drops a table that has pending background work, and can re-create it', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 0 });
    await index.createIndex('gone', { dimensions: 2 });
    await index.upsert('gone', [doc(1, [1, 0])]);
    await index.dropIndex('gone');
    expect(await index.indexExists('gone')).toBe(false);
    await index.createIndex('gone', { dimensions: 2 });
    expect(await index.count('gone')).toBe(0);
    await index.close();
    await expect(index.count('gone')).rejects.toThrow(/closed/);
  });
});
