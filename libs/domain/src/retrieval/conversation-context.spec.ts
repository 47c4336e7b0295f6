import { lendScores } from './conversation-context';

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
});
