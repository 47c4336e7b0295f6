import { characterLength } from './text-length';

describe('characterLength', () => {
  it('counts code points: an emoji is one character, an unpaired surrogate one too', () => {
    expect(characterLength('')).toBe(0);
    expect(characterLength('abc')).toBe(3);
    expect(characterLength('🦦'.repeat(4000))).toBe(4000);
    expect(characterLength('a🦦b')).toBe(3);
    expect(characterLength('\ud800')).toBe(1);
    expect(characterLength('\ud800x')).toBe(2);
  });
});
