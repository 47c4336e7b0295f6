import { jsonInputProblem } from './nul-character';

describe('jsonInputProblem', () => {
  it('names the first string or key holding U+0000 or an unpaired surrogate, with its path', () => {
    expect(jsonInputProblem({ a: 'x', b: [1, 'ok', { c: 'y\u0000' }] }, 'body')).toMatch(/^body\.b\[2\]\.c contains the NUL character/);
    expect(jsonInputProblem({ ['k\u0000']: 1 }, 'body')).toMatch(/^body\.k\u0000 \(a field name\) contains the NUL/);
    expect(jsonInputProblem('q\u0000', 'query')).toMatch(/^query contains/);
    expect(jsonInputProblem({ q: 'a\ud800b' }, 'body')).toMatch(/^body\.q contains an unpaired UTF-16 surrogate/);
    expect(jsonInputProblem({ q: 'a\udc00' }, 'body')).toMatch(/unpaired/);
  });
  it('finds nothing in clean values, emoji (paired surrogates) included', () => {
    expect(jsonInputProblem({ a: 'x 🦦', b: [1, null, true, { c: 'y' }] }, 'body')).toBeNull();
    expect(jsonInputProblem(undefined, 'body')).toBeNull();
  });
  it('bounds depth and fields per object without recursion (10,000 levels deep does not overflow the stack)', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(jsonInputProblem(deep, 'body')).toMatch(/nested more than 64 levels deep/);
    let ok: unknown = 'x';
    for (let i = 0; i < 63; i++) ok = { a: ok };
    expect(jsonInputProblem(ok, 'body')).toBeNull();
    const wide = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, 1]));
    expect(jsonInputProblem(wide, 'body')).toBe('body has 1001 fields, more than 1000');
  });
});
