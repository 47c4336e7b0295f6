import { reconcile } from './reconcile';
import type { ExistingDocument } from './provider.port';

async function* list(...docs: ExistingDocument[]): AsyncIterable<ExistingDocument> {
  yield* docs;
}

describe('reconcile', () => {
  it('finds deletions, changed hashes and new ids, and leaves unchanged documents alone', async () => {
    const known = new Map<string, string | undefined>([
      ['a', 'h1'],
      ['b', 'h2'],
      ['c', 'h3'],
    ]);
    const out = await reconcile(known, list({ id: 'a', contentHash: 'h1' }, { id: 'b', contentHash: 'h2-new' }, { id: 'd', contentHash: 'h4' }));
    expect(out).toEqual({ gone: ['c'], changed: ['b', 'd'] });
  });

  it('treats a listing without hashes as changed, since it cannot tell', async () => {
    const out = await reconcile(new Map([['a', 'h1']]), list({ id: 'a' }));
    expect(out).toEqual({ gone: [], changed: ['a'] });
  });
});
