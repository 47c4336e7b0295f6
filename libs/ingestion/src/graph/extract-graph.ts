import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

/**
 * Offline entity and relation extraction for the context graph.
 * - wink-nlp (English lite model): sentences, parts of speech, dates and emails, runs of proper nouns.
 * - compromise's lexicon: types people, places and organizations (loaded lazily; optional).
 * - Relations: entities co-occurring in a sentence ("co_occurs"), the speaker of a dialogue turn to what they
 *   mention ("mentioned"), and an app item's provider/kind structure ("posted_in").
 * Deterministic for a given text: the pipeline records the result in a blob, so a rebuild never re-extracts.
 */
export type EntityType = 'person' | 'place' | 'organization' | 'date' | 'email' | 'concept';

export interface GraphEntity {
  key: string;
  name: string;
  type: EntityType;
}

export interface GraphMention {
  chunk: number;
  key: string;
}

export interface GraphRelation {
  chunk: number;
  source: string;
  target: string;
  predicate: string;
  context: string;
}

export interface ExtractedGraph {
  entities: GraphEntity[];
  mentions: GraphMention[];
  relations: GraphRelation[];
}

const nlp = winkNLP(model);
const its = nlp.its;

/**
 * Typing by compromise's lexicon (about 25k words tagged FirstName, LastName, City, Country, Organization, ...),
 * looked up per token: deterministic and microseconds per name, where running compromise's full tagger costs
 * tens of milliseconds per text. Loaded lazily; without it every name stays a 'concept'.
 */
interface Lexicon {
  kindOf(word: string): EntityType | null;
  isFirstName(word: string): boolean;
}
let lexicon: Lexicon | null | undefined;
function typingLexicon(): Lexicon | null {
  if (lexicon !== undefined) return lexicon;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require('compromise');
    const world = (mod.default ?? mod).world();
    const words: Record<string, string | string[]> = world.model.one.lexicon;
    const tagSet: Record<string, { is?: string; parents?: string[] }> = world.model.one.tagSet;
    const kindOfTag = (tag: string): EntityType | null => {
      const lineage = [tag, ...(tagSet[tag]?.parents ?? [])];
      if (lineage.includes('Person') && !lineage.includes('Honorific')) return 'person';
      if (lineage.includes('Place')) return 'place';
      if (lineage.includes('Organization')) return 'organization';
      return null;
    };
    const tagsOf = (word: string): string[] => {
      const t = Object.prototype.hasOwnProperty.call(words, word) ? words[word] : undefined;
      return t === undefined ? [] : Array.isArray(t) ? t : [t];
    };
    lexicon = {
      kindOf: (word) => {
        for (const tag of tagsOf(word)) {
          const kind = kindOfTag(tag);
          if (kind) return kind;
        }
        return null;
      },
      isFirstName: (word) => tagsOf(word).some((t) => [t, ...(tagSet[t]?.parents ?? [])].includes('FirstName')),
    };
  } catch {
    lexicon = null;
  }
  return lexicon;
}

/** Words that make a multi-word name an organization or a place whatever the other words are. */
const ORG_HEADS = new Set(['inc', 'corp', 'corporation', 'company', 'co', 'ltd', 'llc', 'group', 'university', 'college', 'institute', 'school', 'academy', 'bank', 'foundation', 'association', 'agency', 'department', 'ministry', 'council', 'committee', 'society', 'club', 'team', 'hospital', 'labs', 'laboratory', 'museum']);
const PLACE_HEADS = new Set(['city', 'county', 'state', 'river', 'lake', 'mountain', 'mountains', 'island', 'islands', 'valley', 'street', 'avenue', 'park', 'beach', 'bay', 'province', 'republic', 'kingdom']);

/** The type of a candidate name, from the lexicon: whole name first, then head words, then a leading first name. */
export function typeName(name: string): EntityType | null {
  const lex = typingLexicon();
  if (!lex) return null;
  const key = entityKey(name);
  const whole = lex.kindOf(key);
  if (whole) return whole;
  const words = key.split(' ');
  if (words.length === 1) return null;
  const last = words[words.length - 1];
  if (ORG_HEADS.has(last)) return 'organization';
  if (PLACE_HEADS.has(last)) return 'place';
  if (lex.isFirstName(words[0])) return 'person';
  return lex.kindOf(last) ?? lex.kindOf(words[0]);
}

const STOP = new Set(['i', 'you', 'he', 'she', 'we', 'they', 'it', 'the', 'a', 'an', 'user', 'assistant', 'hey', 'hi', 'oh', 'yes', 'no', 'ok', 'okay', 'thanks', 'thank', 'wow', 'yeah', 'hello', 'dear', 'mr', 'mrs', 'ms', 'dr']);

/** The normalized identity of an entity name: lowercase, no possessive, punctuation collapsed. */
export function entityKey(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .replace(/[^\p{L}\p{N}@.\s-]+/gu, ' ')
    .replace(/[.\s-]+$/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const cleanName = (s: string) => s.replace(/['’]s$/, '').replace(/[.,;:!?"]+$/g, '').trim();

/** Entities in one piece of text (also used on queries). */
export function extractEntities(text: string): GraphEntity[] {
  return entitiesOf(nlp.readDoc(text));
}

/** Entities of a parsed text: dates and emails from wink's entities, runs of proper nouns typed by the lexicon. */
function entitiesOf(doc: any): GraphEntity[] {
  const found = new Map<string, GraphEntity>();
  const add = (name: string, type: EntityType) => {
    const clean = cleanName(name);
    const key = entityKey(clean);
    if (!key || key.length < 2 || STOP.has(key) || /^\d+$/.test(key)) return;
    const prev = found.get(key);
    if (!prev || (prev.type === 'concept' && type !== 'concept')) found.set(key, { key, name: clean, type });
  };
  doc.entities().each((e: any) => {
    const t = e.out(its.type);
    if (t === 'DATE') add(e.out(), 'date');
    else if (t === 'EMAIL') add(e.out(), 'email');
  });
  // Runs of proper nouns ("John Smith", "Boston") are candidate entities.
  doc.sentences().each((s: any) => {
    let run: string[] = [];
    const flush = () => {
      if (run.length) {
        const name = run.join(' ');
        add(name, typeName(cleanName(name)) ?? 'concept');
      }
      run = [];
    };
    s.tokens().each((tk: any, i: number) => {
      const pos = tk.out(its.pos);
      const value = tk.out();
      if (pos === 'PROPN' && /^\p{Lu}/u.test(value) && !(i === 0 && STOP.has(value.toLowerCase()))) run.push(value);
      else flush();
    });
    flush();
  });
  return [...found.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export interface ExtractionInput {
  chunks: { index: number; text: string }[];
  /** dialogue speaker ("X said, ...") when the item is a turn of a conversation */
  speaker?: string | null;
  appProvider?: string | null;
  appKind?: string | null;
  /**
   * The item's custom instructions (a connector's effective instructions, an ingest's `custom_instructions`). This
   * extractor reads the entity types they name ("people", "organizations", "places", "dates", "emails", "concepts" or
   * "topics") and keeps only those; instructions that name none keep every type. The app provider's own entity,
   * the structure of an app item, is kept either way.
   */
  instructions?: string | null;
}

const TYPE_WORDS: readonly [EntityType, RegExp][] = [
  ['person', /\b(?:person|persons|people)\b/i],
  ['place', /\b(?:places?|locations?)\b/i],
  ['organization', /\b(?:organi[sz]ations?|compan(?:y|ies))\b/i],
  ['date', /\bdates?\b/i],
  ['email', /\be-?mails?\b/i],
  ['concept', /\b(?:concepts?|topics?)\b/i],
];

/** The entity types instructions name; all of them when they name none. */
export function entityTypesFromInstructions(instructions?: string | null): Set<EntityType> {
  const named = instructions ? TYPE_WORDS.filter(([, re]) => re.test(instructions)).map(([t]) => t) : [];
  return new Set(named.length ? named : TYPE_WORDS.map(([t]) => t));
}

const SPEAKER = /^\s*([\p{Lu}][\p{L}'-]*(?:\s[\p{Lu}][\p{L}'-]*)?) said,/u;

export function extractGraph(input: ExtractionInput): ExtractedGraph {
  const entities = new Map<string, GraphEntity>();
  const mentions: GraphMention[] = [];
  const relations: GraphRelation[] = [];
  const seenRel = new Set<string>();
  const relate = (r: GraphRelation) => {
    const id = `${r.chunk}|${r.source}|${r.target}|${r.predicate}`;
    if (r.source === r.target || seenRel.has(id)) return;
    seenRel.add(id);
    relations.push(r);
  };
  for (const chunk of input.chunks) {
    const speakerName = input.speaker ?? SPEAKER.exec(chunk.text)?.[1] ?? null;
    const speaker = speakerName ? { key: entityKey(speakerName), name: speakerName, type: 'person' as EntityType } : null;
    const inChunk = new Map<string, GraphEntity>();
    if (speaker && speaker.key) inChunk.set(speaker.key, speaker);
    const doc = nlp.readDoc(chunk.text);
    for (const e of entitiesOf(doc)) if (!inChunk.has(e.key) || inChunk.get(e.key)!.type === 'concept') inChunk.set(e.key, e);
    for (const e of inChunk.values()) {
      if (!entities.has(e.key) || entities.get(e.key)!.type === 'concept') entities.set(e.key, e);
      mentions.push({ chunk: chunk.index, key: e.key });
    }
    const sentences = doc.sentences().out() as string[];
    for (const sentence of sentences) {
      const keys = [...inChunk.keys()].filter((k) => k !== speaker?.key && entityKey(sentence).includes(k));
      for (let i = 0; i < keys.length; i++) for (let j = i + 1; j < keys.length; j++) relate({ chunk: chunk.index, source: keys[i], target: keys[j], predicate: 'co_occurs', context: sentence.slice(0, 300) });
      if (speaker) for (const k of keys) relate({ chunk: chunk.index, source: speaker.key, target: k, predicate: 'mentioned', context: sentence.slice(0, 300) });
    }
    if (input.appProvider) {
      const p = { key: entityKey(input.appProvider), name: input.appProvider, type: 'organization' as EntityType };
      if (p.key) {
        if (!entities.has(p.key)) entities.set(p.key, p);
        mentions.push({ chunk: chunk.index, key: p.key });
        for (const k of inChunk.keys()) relate({ chunk: chunk.index, source: k, target: p.key, predicate: input.appKind ? `${input.appKind}_in` : 'posted_in', context: chunk.text.slice(0, 300) });
      }
    }
  }
  const wanted = entityTypesFromInstructions(input.instructions);
  const providerKey = input.appProvider ? entityKey(input.appProvider) : null;
  const kept = new Set([...entities.values()].filter((e) => wanted.has(e.type) || e.key === providerKey).map((e) => e.key));
  return {
    entities: [...entities.values()].filter((e) => kept.has(e.key)).sort((a, b) => (a.key < b.key ? -1 : 1)),
    mentions: mentions.filter((m) => kept.has(m.key)),
    relations: relations.filter((r) => kept.has(r.source) && kept.has(r.target)),
  };
}
