import { holdsPhrase, splitByBoundary, type PositionedToken } from './lancedb-phrase';

/** Tokens as the index's tokenizer gives them: words at their positions, stop words left out (a gap). */
const tokens = (...words: (string | null)[]): PositionedToken[] =>
  words.flatMap((text, position) => (text === null ? [] : [{ text, position }]));

describe('holdsPhrase', () => {
  it('needs every token of the phrase at the same relative positions', () => {
    expect(holdsPhrase(tokens('red', 'appl'), tokens('bright', 'red', 'appl'))).toBe(true);
    expect(holdsPhrase(tokens('red', 'appl'), tokens('appl', 'red'))).toBe(false);
    expect(holdsPhrase(tokens('red', 'appl'), tokens('red', 'green', 'appl'))).toBe(false);
    expect(holdsPhrase(tokens('red', 'appl'), tokens('green', 'car'))).toBe(false);
  });

  it('keeps the gaps stop words leave, in the phrase and in the text', () => {
    const stateOfTheArt = tokens('state', null, null, 'art'); // "state of the art"
    expect(holdsPhrase(stateOfTheArt, tokens('state', null, null, 'art', null, 'here'))).toBe(true);
    expect(holdsPhrase(stateOfTheArt, tokens('state', null, 'art'))).toBe(false); // "state of art"
    expect(holdsPhrase(stateOfTheArt, tokens('state', 'art'))).toBe(false);
  });

  it('finds the phrase at any occurrence of its first token, and a repeated token', () => {
    expect(holdsPhrase(tokens('new', 'york'), tokens('new', 'jersey', 'new', 'york'))).toBe(true);
    expect(holdsPhrase(tokens('ha', 'ha'), tokens('ha', 'x', 'ha'))).toBe(false);
    expect(holdsPhrase(tokens('ha', 'ha'), tokens('x', 'ha', 'ha'))).toBe(true);
  });

  it('holds nothing for an empty phrase', () => {
    expect(holdsPhrase([], tokens('a'))).toBe(false);
  });
});

describe('splitByBoundary', () => {
  it('splits the tokens of joined texts back into one list per text', () => {
    const joined = [...tokens('one', 'two'), { text: 'sep', position: 2 }, { text: 'three', position: 3 }, { text: 'sep', position: 4 }];
    expect(splitByBoundary(joined, 'sep', 3)).toEqual([tokens('one', 'two'), [{ text: 'three', position: 3 }], []]);
  });

  it('gives up when the boundary came back another number of times (a text held it)', () => {
    const joined = [{ text: 'sep', position: 0 }, { text: 'sep', position: 1 }];
    expect(splitByBoundary(joined, 'sep', 2)).toBeUndefined();
  });
});
