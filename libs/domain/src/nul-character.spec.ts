import { nulCharacterPath } from './nul-character';

describe('nulCharacterPath', () => {
  it('names the first string or key holding U+0000, with its path', () => {
    expect(nulCharacterPath({ a: 'x', b: [1, 'ok', { c: 'y\u0000' }] }, 'body')).toBe('body.b[2].c');
    expect(nulCharacterPath({ ['k\u0000']: 1 }, '')).toBe('k\u0000');
    expect(nulCharacterPath('q\u0000', 'query')).toBe('query');
  });
  it('finds nothing in clean values', () => {
    expect(nulCharacterPath({ a: 'x', b: [1, null, true, { c: 'y' }] }, 'body')).toBeNull();
    expect(nulCharacterPath(undefined, 'body')).toBeNull();
  });
});
