import { createHash } from 'node:crypto';
import { TrigramHashingEmbedder, trigramHashVector } from './trigram-hashing';
import { dot } from './unit-vector';

describe('trigram hashing', () => {
  it('gives a unit vector, identical on every run and machine (golden bytes)', () => {
    const v = trigramHashVector('invoice', 100);
    expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 6);
    // Integer hashing only: if this changes, every stored vector using it changes too.
    expect(createHash('sha256').update(Buffer.from(v.buffer)).digest('hex').slice(0, 16)).toBe('4e8e54156303b2c8');
  });

  it('puts typos and near-identical ids close, unrelated words far', () => {
    const cos = (a: string, b: string) => dot(trigramHashVector(a, 100), trigramHashVector(b, 100));
    expect(cos('kubernetes', 'kubernetse')).toBeGreaterThan(0.4);
    expect(cos('inv-2024-00042', 'inv-2024-00043')).toBeGreaterThan(0.6);
    expect(cos('kubernetes', 'banana')).toBeLessThan(0.3);
  });

  it('the baseline embedder averages word vectors', async () => {
    const e = new TrigramHashingEmbedder(64);
    expect(e.modelId).toBe('trigram-hash-64d-v1');
    const [a, b] = await e.embed(['Quarterly report', 'report quarterly']);
    expect(dot(a, b)).toBeCloseTo(1, 6);
  });
});
