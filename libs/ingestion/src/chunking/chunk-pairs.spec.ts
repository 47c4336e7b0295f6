import { chunkPairs, pairsTranscript } from './chunk-pairs';
import { countTokens } from './token-count';

const answer = (sentences: number) =>
  Array.from({ length: sentences }, (_, i) => `Step ${i} of the answer explains one more detail about the deployment.`).join(' ');

describe('chunkPairs', () => {
  it('returns no chunks for no pairs or only empty ones', () => {
    expect(chunkPairs([])).toEqual([]);
    expect(chunkPairs([{ user: ' ', assistant: '' }])).toEqual([]);
  });

  it('keeps a pair together as "User: …\\nAssistant: …"', () => {
    expect(chunkPairs([{ user: ' Where is the VPN guide? ', assistant: 'In the wiki, under IT.' }])).toEqual([
      { index: 0, text: 'User: Where is the VPN guide?\nAssistant: In the wiki, under IT.', startChar: 0, endChar: 63 },
    ]);
  });

  it('packs consecutive small pairs up to maxTokens without separating any pair', () => {
    const pairs = Array.from({ length: 12 }, (_, i) => ({ user: `Question ${i}?`, assistant: `Answer number ${i}.` }));
    const chunks = chunkPairs(pairs, { maxTokens: 32 });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(pairs.length);
    const transcript = pairsTranscript(pairs);
    for (const chunk of chunks) {
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(32);
      expect(chunk.text).toBe(transcript.slice(chunk.startChar, chunk.endChar));
      expect(chunk.text).toMatch(/^(User: Question \d+\?\nAssistant: Answer number \d+\.)(\n\nUser: Question \d+\?\nAssistant: Answer number \d+\.)*$/);
    }
    expect(chunks.map((c) => c.text).join('\n\n')).toBe(transcript);
  });

  it('splits a pair larger than a chunk, leading every piece with the User line', () => {
    const pairs = [
      { user: 'hi', assistant: 'hello' },
      { user: 'How do I deploy?', assistant: answer(20) },
      { user: 'thanks', assistant: 'bye' },
    ];
    const chunks = chunkPairs(pairs, { maxTokens: 64 });
    expect(chunks[0]!.text).toBe('User: hi\nAssistant: hello');
    const pieces = chunks.slice(1, -1);
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces) {
      expect(piece.text.startsWith('User: How do I deploy?\nAssistant: ')).toBe(true);
      expect(countTokens(piece.text)).toBeLessThanOrEqual(64);
    }
    // the answer's pieces overlap and together cover it
    const transcript = pairsTranscript(pairs);
    const bodies = pieces.map((p) => transcript.slice(p.startChar, p.endChar));
    for (const [i, body] of bodies.entries()) expect(piecesText(pieces[i]!.text)).toBe(body);
    for (let i = 1; i < pieces.length; i++) expect(pieces[i]!.startChar).toBeLessThan(pieces[i - 1]!.endChar);
    expect(transcript.slice(pieces[0]!.startChar, pieces.at(-1)!.endChar)).toBe(answer(20));
    expect(chunks.at(-1)!.text).toBe('User: thanks\nAssistant: bye');
  });

  it('chunks an overlong question on its own and gives the answer pieces its shortened first words', () => {
    const question = answer(10).replace(/\./g, '?');
    const chunks = chunkPairs([{ user: question, assistant: answer(10) }], { maxTokens: 64 });
    const userPieces = chunks.filter((c) => !c.text.includes('\nAssistant: '));
    const answerPieces = chunks.filter((c) => c.text.includes('\nAssistant: '));
    expect(userPieces.length).toBeGreaterThan(1);
    expect(answerPieces.length).toBeGreaterThan(1);
    for (const chunk of userPieces) expect(chunk.text.startsWith('User: ')).toBe(true);
    for (const chunk of answerPieces) expect(chunk.text).toMatch(/^User: Step 0 of .* …\nAssistant: /);
    for (const chunk of chunks) expect(countTokens(chunk.text)).toBeLessThanOrEqual(64);
  });

  it('leads with the title when given', () => {
    const [chunk] = chunkPairs([{ user: 'a?', assistant: 'b.' }], { title: 'Support chat' });
    expect(chunk!.text).toBe('Support chat\nUser: a?\nAssistant: b.');
  });

  it('is deterministic', () => {
    const pairs = Array.from({ length: 30 }, (_, i) => ({ user: `Question ${i}?`, assistant: answer(i % 9) }));
    expect(chunkPairs(pairs, { maxTokens: 80 })).toEqual(chunkPairs(structuredClone(pairs), { maxTokens: 80 }));
  });
});

function piecesText(text: string): string {
  return text.slice(text.indexOf('\nAssistant: ') + '\nAssistant: '.length);
}
