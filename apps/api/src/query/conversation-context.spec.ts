import { configFromEnv } from '../config';
import { CONTEXT_DEFAULTS, lendScores } from './conversation-context';

/** The weights the configuration reads from these variables. */
const contextWeights = (env: NodeJS.ProcessEnv) => configFromEnv(env, 'postgres://spec').retrieval.context;

describe('conversation context', () => {
  it('lends a hit its weights to the memories after and before it, added to their own scores', () => {
    const scores = new Map([
      ['q', 10],
      ['b', 2],
    ]);
    const neighbours = new Map([
      [
        'q',
        [
          { itemKey: 'a', distance: 1 },
          { itemKey: 'b', distance: 2 },
          { itemKey: 'p', distance: -1 },
        ],
      ],
    ]);
    const out = lendScores(scores, neighbours, { after: [0.5, 0.25], before: [0.25] });
    expect(Object.fromEntries(out)).toEqual({ q: 10, a: 5, b: 2 + 2.5, p: 2.5 });
  });
  it('lends only the hits own scores (no chains) and nothing past the weights given', () => {
    const out = lendScores(
      new Map([['x', 4]]),
      new Map([
        ['x', [{ itemKey: 'y', distance: 3 }]],
        ['y', [{ itemKey: 'z', distance: 1 }]],
      ]),
      { after: [0.5], before: [] },
    );
    expect(Object.fromEntries(out)).toEqual({ x: 4 });
  });
  it('reads RETRIEVAL_CONTEXT_AFTER / _BEFORE and refuses bad values', () => {
    expect(contextWeights({})).toEqual(CONTEXT_DEFAULTS);
    expect(contextWeights({ RETRIEVAL_CONTEXT_AFTER: '0.4', RETRIEVAL_CONTEXT_BEFORE: '0' })).toEqual({ after: [0.4], before: [] });
    expect(contextWeights({ RETRIEVAL_CONTEXT_AFTER: '', RETRIEVAL_CONTEXT_BEFORE: '0.1,0' })).toEqual({ after: [], before: [0.1] });
    expect(() => contextWeights({ RETRIEVAL_CONTEXT_AFTER: 'much' })).toThrow(/RETRIEVAL_CONTEXT_AFTER/);
    expect(() => contextWeights({ RETRIEVAL_CONTEXT_BEFORE: '-1' })).toThrow(/RETRIEVAL_CONTEXT_BEFORE/);
    expect(() => contextWeights({ RETRIEVAL_CONTEXT_AFTER: '1,1,1,1' })).toThrow(/RETRIEVAL_CONTEXT_AFTER/);
  });
});
