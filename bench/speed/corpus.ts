import { chunkText } from '@crs/ingestion/chunking/chunk-text';
import type { AppKnowledgeInput, MemoryInput } from '../lib/client';
import { pick, seededRandom, zipfIndex } from '../lib/prng';

/**
 * A seeded generator of realistic synthetic content: chat memories, Markdown documents and app items
 * (tickets, messages) with ACLs and metadata. Same seed, same corpus. English words, so keyword and
 * vector search behave as on real text; topic vocabularies make some content relevant to some queries.
 */

const TOPICS: Record<string, string[]> = {
  billing: ['invoice', 'payment', 'refund', 'subscription', 'pricing', 'discount', 'charge', 'receipt', 'plan', 'upgrade', 'credit', 'tax', 'renewal', 'billing', 'checkout'],
  deployment: ['deploy', 'release', 'rollback', 'pipeline', 'container', 'cluster', 'kubernetes', 'staging', 'production', 'canary', 'build', 'artifact', 'image', 'helm', 'terraform'],
  security: ['password', 'token', 'encryption', 'audit', 'vulnerability', 'firewall', 'certificate', 'permission', 'breach', 'login', 'phishing', 'compliance', 'secret', 'policy', 'access'],
  onboarding: ['welcome', 'account', 'setup', 'tutorial', 'invite', 'profile', 'training', 'checklist', 'mentor', 'orientation', 'guide', 'introduction', 'workspace', 'team', 'handbook'],
  travel: ['flight', 'hotel', 'booking', 'itinerary', 'passport', 'luggage', 'airport', 'train', 'visa', 'reservation', 'vacation', 'beach', 'mountain', 'museum', 'city'],
  cooking: ['recipe', 'oven', 'garlic', 'pasta', 'bread', 'soup', 'spices', 'kitchen', 'dinner', 'vegetables', 'baking', 'sauce', 'flour', 'grill', 'dessert'],
  health: ['doctor', 'appointment', 'exercise', 'sleep', 'diet', 'medication', 'allergy', 'running', 'yoga', 'therapy', 'vitamins', 'clinic', 'symptoms', 'recovery', 'fitness'],
  database: ['query', 'index', 'postgres', 'replica', 'schema', 'migration', 'backup', 'latency', 'transaction', 'table', 'shard', 'cache', 'vacuum', 'connection', 'snapshot'],
  hiring: ['interview', 'candidate', 'resume', 'offer', 'recruiter', 'salary', 'position', 'referral', 'onsite', 'feedback', 'hiring', 'role', 'contract', 'benefits', 'startdate'],
  marketing: ['campaign', 'newsletter', 'audience', 'conversion', 'brand', 'launch', 'webinar', 'seo', 'analytics', 'social', 'advertising', 'funnel', 'content', 'event', 'sponsor'],
  family: ['birthday', 'kids', 'school', 'grandparents', 'wedding', 'holiday', 'anniversary', 'garden', 'dog', 'cat', 'weekend', 'picnic', 'gift', 'party', 'cousin'],
  music: ['guitar', 'concert', 'album', 'playlist', 'piano', 'band', 'lyrics', 'festival', 'drums', 'singer', 'vinyl', 'rehearsal', 'melody', 'orchestra', 'song'],
};
const TOPIC_NAMES = Object.keys(TOPICS);

const COMMON = (
  'the a an and or but of to in on for with about after before during while because so that this those these it they we you he she ' +
  'is was are were be been has have had will would could should can may might must do does did not very really quite just still also ' +
  'new old next last first other same different important urgent small large quick slow early late recent good better best bad ' +
  'team customer user manager engineer support company project meeting week month year day morning evening today tomorrow yesterday ' +
  'update issue problem question answer plan idea note change request report review decision time schedule process result ' +
  'need want like think know say said ask asked tell told make made take took help helped start started finish finished move moved ' +
  'check checked try tried send sent share shared keep kept call called write wrote read find found use used work worked'
).split(' ');
const VERBS = ['mentioned', 'prefers', 'asked about', 'reported', 'is planning', 'confirmed', 'forgot', 'loves', 'scheduled', 'cancelled', 'reviewed', 'fixed', 'needs', 'shared'];
const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory', 'niaj', 'olivia', 'peggy', 'rupert', 'sybil', 'trent', 'victor', 'walter', 'yasmin'];
export const TEAMS = ['platform', 'payments', 'growth', 'infra', 'support', 'research', 'design', 'sales'];
const PROVIDERS = ['slack', 'jira', 'github', 'notion', 'zendesk'];
const KINDS: Record<string, string> = { slack: 'message', jira: 'ticket', github: 'issue', notion: 'page', zendesk: 'ticket' };

export const USERS = 200;
export const userPrincipal = (i: number) => `user_email:user${i}@example.com`;
export const groupPrincipal = (team: string) => `group:okta:${team}`;

/** Database metadata schema the generated metadata fits (so schema attributes can be filtered at the top level). */
export const SPEED_METADATA_SCHEMA = [
  { name: 'team', type: 'string' },
  { name: 'priority', type: 'integer' },
  { name: 'lang', type: 'string' },
];

export interface GeneratedFile {
  id: string;
  filename: string;
  title: string;
  content: string;
  metadata: Record<string, unknown>;
  additional_metadata: Record<string, unknown>;
  acl?: string[];
}

export interface SpeedCorpus {
  seed: number;
  memories: MemoryInput[];
  documents: GeneratedFile[];
  apps: AppKnowledgeInput[];
  /** Chunk counts the service's chunker gives this content (an estimate: files go through the parser first). */
  estimatedChunks: { memories: number; documents: number; apps: number; total: number };
}

export interface CorpusShares {
  memories: number;
  documents: number;
  apps: number;
  /**
   * Memories as the turns of conversations: runs of 10-30 consecutive turns of one user and session share their
   * additional metadata and topic, as an agent's memories of one chat do (the conversation context then has
   * neighbours to lend to). Otherwise each memory draws its user, source and topic on its own.
   */
  conversations?: boolean;
}

/** Share of the chunks each kind makes up. */
export const DEFAULT_SHARES: CorpusShares = { memories: 0.4, documents: 0.35, apps: 0.25 };

export class TextGenerator {
  readonly random: () => number;
  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  topic(): string {
    return pick(this.random, TOPIC_NAMES);
  }

  word(topic: string): string {
    const r = this.random();
    if (r < 0.3) return TOPICS[topic][zipfIndex(this.random, TOPICS[topic].length, 1.5)];
    if (r < 0.36) return TOPICS[pick(this.random, TOPIC_NAMES)][zipfIndex(this.random, 15, 1.5)];
    if (r < 0.4) return pick(this.random, PEOPLE);
    return COMMON[zipfIndex(this.random, COMMON.length, 2)];
  }

  sentence(topic: string, min = 8, max = 20): string {
    const n = min + Math.floor(this.random() * (max - min + 1));
    const subject = pick(this.random, PEOPLE);
    const words = [subject.charAt(0).toUpperCase() + subject.slice(1), pick(this.random, VERBS)];
    while (words.length < n) words.push(this.word(topic));
    return `${words.join(' ')}.`;
  }

  paragraph(topic: string, sentences: number): string {
    return Array.from({ length: sentences }, () => this.sentence(topic)).join(' ');
  }

  /** A search query: two to five words, mostly topic words (what a user would type). */
  query(topic = this.topic()): string {
    const n = 2 + Math.floor(this.random() * 4);
    const words: string[] = [];
    while (words.length < n) words.push(this.random() < 0.65 ? TOPICS[topic][zipfIndex(this.random, TOPICS[topic].length, 1.3)] : this.word(topic));
    return words.join(' ');
  }

  metadata(): { team: string; priority: number; lang: string } {
    return { team: pick(this.random, TEAMS), priority: 1 + Math.floor(this.random() * 5), lang: this.random() < 0.8 ? 'en' : 'de' };
  }

  acl(): string[] {
    const r = this.random();
    if (r < 0.15) return ['__public__'];
    const out = new Set<string>();
    out.add(userPrincipal(Math.floor(this.random() * USERS)));
    if (r < 0.7) out.add(groupPrincipal(pick(this.random, TEAMS)));
    if (r > 0.9) out.add('domain:example.com');
    return [...out];
  }
}

function markdownDocument(g: TextGenerator, title: string, topic: string): string {
  const parts = [`# ${title}`, '', g.paragraph(topic, 2), ''];
  const sections = 3 + Math.floor(g.random() * 5);
  for (let s = 0; s < sections; s++) {
    parts.push(`## ${g.word(topic)} ${g.word(topic)} ${s + 1}`, '');
    const paragraphs = 1 + Math.floor(g.random() * 3);
    for (let p = 0; p < paragraphs; p++) parts.push(g.paragraph(topic, 3 + Math.floor(g.random() * 4)), '');
    const r = g.random();
    if (r < 0.3) parts.push(...Array.from({ length: 3 + Math.floor(g.random() * 4) }, () => `- ${g.sentence(topic, 5, 10)}`), '');
    else if (r < 0.4) parts.push('```bash', `kubectl rollout status deploy/${g.word(topic)}`, `curl -s https://api.example.com/v1/${g.word(topic)}`, '```', '');
    else if (r < 0.5) parts.push('| field | value |', '| --- | --- |', `| ${g.word(topic)} | ${g.word(topic)} |`, `| ${g.word(topic)} | ${Math.floor(g.random() * 1000)} |`, '');
  }
  return parts.join('\n');
}

/**
 * Generates until each kind holds its share of `targetChunks` (counted with the service's own chunker, 512 tokens, its default CHUNK_TOKENS).
 */
export function generateCorpus(targetChunks: number, seed = 42, shares: CorpusShares = DEFAULT_SHARES): SpeedCorpus {
  const g = new TextGenerator(seed);
  const chunks = (text: string, opts: { title?: string | null; isMarkdown?: boolean } = {}) => chunkText(text, { maxTokens: 512, ...opts }).length;
  const corpus: SpeedCorpus = { seed, memories: [], documents: [], apps: [], estimatedChunks: { memories: 0, documents: 0, apps: 0, total: 0 } };
  const want = { memories: Math.round(targetChunks * shares.memories), documents: Math.round(targetChunks * shares.documents), apps: 0 };
  want.apps = targetChunks - want.memories - want.documents;

  let session = { left: 0, topic: '', additional: {} as Record<string, unknown> };
  while (corpus.estimatedChunks.memories < want.memories) {
    const i = corpus.memories.length;
    if (shares.conversations && session.left === 0) {
      const topic = g.topic();
      session = { left: 10 + Math.floor(g.random() * 21), topic, additional: { user_id: `user${Math.floor(g.random() * USERS)}`, session: `s${i}`, source: 'chat', topic } };
    }
    const topic = shares.conversations ? session.topic : g.topic();
    const text = g.paragraph(topic, 1 + Math.floor(g.random() * 3));
    const meta = g.metadata();
    corpus.memories.push({
      id: `mem-${i}`,
      text,
      metadata: JSON.stringify(meta),
      additional_metadata: shares.conversations ? session.additional : { user_id: `user${Math.floor(g.random() * USERS)}`, source: g.random() < 0.7 ? 'chat' : 'email', topic },
    });
    session.left--;
    corpus.estimatedChunks.memories += chunks(text);
  }
  while (corpus.estimatedChunks.documents < want.documents) {
    const topic = g.topic();
    const i = corpus.documents.length;
    const title = `${topic} ${g.word(topic)} ${g.word(topic)} guide ${i}`;
    const content = markdownDocument(g, title, topic);
    const hasAcl = g.random() < 0.5;
    corpus.documents.push({
      id: `doc-${i}`,
      filename: `doc-${i}.md`,
      title,
      content,
      metadata: g.metadata(),
      additional_metadata: { source: 'wiki', topic },
      ...(hasAcl ? { acl: g.acl() } : {}),
    });
    corpus.estimatedChunks.documents += chunks(content, { title, isMarkdown: true });
  }
  while (corpus.estimatedChunks.apps < want.apps) {
    const topic = g.topic();
    const i = corpus.apps.length;
    const provider = pick(g.random, PROVIDERS);
    const title = `${KINDS[provider]}: ${g.sentence(topic, 4, 8).slice(0, -1)}`;
    const text = g.paragraph(topic, 2 + Math.floor(g.random() * 6));
    corpus.apps.push({
      id: `app-${i}`,
      title,
      content: { text },
      acl: g.acl(),
      metadata: g.metadata(),
      additional_metadata: { provider, kind: KINDS[provider], topic },
    });
    corpus.estimatedChunks.apps += chunks(text, { title });
  }
  const e = corpus.estimatedChunks;
  e.total = e.memories + e.documents + e.apps;
  return corpus;
}
