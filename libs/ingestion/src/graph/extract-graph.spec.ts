import { entityKey, entityTypesFromInstructions, extractEntities, extractGraph } from './extract-graph';

describe('graph extraction', () => {
  it('finds people, places, organizations, dates and emails, with normalized keys', () => {
    const e = extractEntities('Caroline went to the LGBTQ support group in Boston on May 7, 2023. Microsoft hired John Smith. Mail ann@corp.io.');
    const byKey = Object.fromEntries(e.map((x) => [x.key, x.type]));
    expect(byKey.caroline).toBe('person');
    expect(byKey.boston).toBe('place');
    expect(byKey.microsoft).toBe('organization');
    expect(byKey['john smith']).toBe('person');
    expect(byKey['may 7, 2023'] ?? byKey['may 7 2023']).toBe('date');
    expect(byKey['ann@corp.io']).toBe('email');
  });
  it('normalizes names so the same entity is not duplicated', () => {
    expect(entityKey("Caroline's")).toBe('caroline');
    expect(entityKey('  BOSTON. ')).toBe('boston');
    const g = extractGraph({ chunks: [{ index: 0, text: 'Caroline met Melanie. Caroline’s dog barked.' }, { index: 1, text: 'CAROLINE left.' }] });
    expect(g.entities.filter((x) => x.key === 'caroline')).toHaveLength(1);
  });
  it('relates co-occurring entities and the speaker of a dialogue turn to what they mention', () => {
    const g = extractGraph({ chunks: [{ index: 0, text: 'Melanie said, "I took Caroline to the museum in Paris."' }] });
    expect(g.relations).toEqual(expect.arrayContaining([
      expect.objectContaining({ source: 'melanie', target: 'caroline', predicate: 'mentioned' }),
      expect.objectContaining({ predicate: 'co_occurs' }),
    ]));
    expect(g.mentions.map((m) => m.key)).toEqual(expect.arrayContaining(['melanie', 'caroline', 'paris']));
  });
  it('is deterministic', () => {
    const input = { chunks: [{ index: 0, text: 'Ada Lovelace worked with Charles Babbage in London in 1843.' }] };
    expect(extractGraph(input)).toEqual(extractGraph(input));
  });
  it('keeps only the entity types custom instructions name, and every type when they name none', () => {
    const text = 'Microsoft hired John Smith in Boston on May 7, 2023.';
    const types = (instructions?: string) => [...new Set(extractGraph({ chunks: [{ index: 0, text }], instructions }).entities.map((e) => e.type))].sort();
    expect(types()).toEqual(expect.arrayContaining(['organization', 'person', 'place']));
    expect(types('Only extract people and companies.')).toEqual(['organization', 'person']);
    expect(types('Focus on places')).toEqual(['place']);
    expect(types('Summarise tersely.')).toEqual(types());
    const onlyPeople = extractGraph({ chunks: [{ index: 0, text }], instructions: 'people only' });
    expect(onlyPeople.mentions.every((m) => onlyPeople.entities.some((e) => e.key === m.key))).toBe(true);
    expect(onlyPeople.relations.every((r) => r.source === 'john smith' || r.target === 'john smith')).toBe(true);
    expect([...entityTypesFromInstructions('emails and dates')].sort()).toEqual(['date', 'email']);
  });
  it("keeps an app item's provider entity whatever the instructions name", () => {
    const g = extractGraph({ chunks: [{ index: 0, text: 'Ada Lovelace wrote the notes.' }], appProvider: 'slack', appKind: 'message', instructions: 'people only' });
    expect(g.entities.map((e) => e.key)).toEqual(expect.arrayContaining(['slack', 'ada lovelace']));
  });
});
