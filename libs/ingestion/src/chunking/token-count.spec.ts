import { countTokens, tokenSpans } from './token-count';

describe('countTokens', () => {
  it('counts words and each punctuation mark', () => {
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens("don't")).toBe(3);
    expect(countTokens('https://example.com/a')).toBe(9); // https : / / example . com / a
  });

  it('counts nothing for whitespace', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens(' \n\t ')).toBe(0);
  });

  it('counts one token per started 10 characters of a long word', () => {
    expect(countTokens('abcdefghij')).toBe(1);
    expect(countTokens('internationalization')).toBe(2);
    expect(countTokens('a'.repeat(4000))).toBe(400);
  });

  it('counts each Han or kana character, and Latin words next to them separately', () => {
    expect(countTokens('我们去公园')).toBe(5);
    expect(countTokens('東京abcカタカナ')).toBe(2 + 1 + 4);
  });

  it('sums its spans', () => {
    const text = 'Grace Hopper, 1906–1992: “It’s easier to ask forgiveness.”';
    expect(tokenSpans(text).reduce((sum, span) => sum + span.tokens, 0)).toBe(countTokens(text));
    expect(tokenSpans('ab, cd').map((s) => [s.start, s.end])).toEqual([
      [0, 2],
      [2, 3],
      [4, 6],
    ]);
  });
});
