import { isTokenizerWord, tokenizeEnglish } from './english-tokenizer';

describe('tokenizeEnglish', () => {
  it('lowercases and splits on everything but letters and digits', () => {
    expect(tokenizeEnglish('Hello, World! state-of-the-art user_id=42')).toEqual(['hello', 'world', 'state', 'of', 'the', 'art', 'user', 'id', '42']);
  });

  it('keeps non-ASCII letters and normalizes compatibility forms', () => {
    expect(tokenizeEnglish('Café NAÏVE ｆｕｌｌ')).toEqual(['café', 'naïve', 'full']);
  });

  it('expands negations and drops clitics, GloVe style', () => {
    expect(tokenizeEnglish("I don't think it's John's, can't won't")).toEqual(['i', 'do', 'not', 'think', 'it', 'john', 'can', 'not', 'will', 'not']);
    expect(tokenizeEnglish('It’s O’Brien’s')).toEqual(['it', "o'brien"]);
  });

  it('returns nothing for blank or punctuation-only text', () => {
    expect(tokenizeEnglish('')).toEqual([]);
    expect(tokenizeEnglish(' \n -- !!! ')).toEqual([]);
  });

  it('recognises the words it can produce', () => {
    expect(isTokenizerWord('hello')).toBe(true);
    expect(isTokenizerWord("o'brien")).toBe(true);
    expect(isTokenizerWord(',')).toBe(false);
    expect(isTokenizerWord('cross-country')).toBe(false);
    expect(isTokenizerWord('Hello')).toBe(false);
  });
});
