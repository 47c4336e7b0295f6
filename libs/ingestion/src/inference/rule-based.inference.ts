import type { Inference, InferenceInput, InferredFact, FactKind } from './inference.port';
import { userUtterances } from './inference.port';

/**
 * Offline extraction by patterns over the user's sentences: "I prefer / like / love / enjoy / hate / always /
 * never ...", "my X is Y", "I live in / work at / am a ...". Statements are rewritten in the third person with
 * the user's name ("the user" when unknown). `custom_instructions` may name the kinds to keep
 * (e.g. "only preferences"); other instructions need a language model (LLM_BASE_URL) to take effect.
 */
interface Pattern {
  re: RegExp;
  kind: FactKind;
  render: (subject: string, m: RegExpExecArray) => string;
}

const clause = "([^.!?;\\n]{2,160})";
const PATTERNS: Pattern[] = [
  { re: new RegExp(`\\bI (?:really |truly |much )?prefer ${clause}`, 'gi'), kind: 'preference', render: (s, m) => `${s} prefers ${m[1]}` },
  { re: new RegExp(`\\bI (?:really |truly |absolutely )?(love|like|enjoy|adore) ${clause}`, 'gi'), kind: 'preference', render: (s, m) => `${s} ${third(m[1])} ${m[2]}` },
  { re: new RegExp(`\\bI (?:really )?(hate|dislike|can't stand|cannot stand|don't like|do not like) ${clause}`, 'gi'), kind: 'preference', render: (s, m) => `${s} ${negative(m[1])} ${m[2]}` },
  { re: new RegExp(`\\bI (always|never|usually|often|rarely) ${clause}`, 'gi'), kind: 'trait', render: (s, m) => `${s} ${m[1]} ${thirdVerb(m[2])}` },
  { re: new RegExp(`\\bmy (favou?rite [a-z ]{2,40}|[a-z ]{2,40}) is ${clause}`, 'gi'), kind: 'fact', render: (s, m) => `${possessive(s)} ${m[1].trim()} is ${m[2]}` },
  { re: new RegExp(`\\bI live in ${clause}`, 'gi'), kind: 'fact', render: (s, m) => `${s} lives in ${m[1]}` },
  { re: new RegExp(`\\bI work (at|for|as) ${clause}`, 'gi'), kind: 'fact', render: (s, m) => `${s} works ${m[1]} ${m[2]}` },
  { re: new RegExp(`\\bI(?: am|'m) (?:a|an) ${clause}`, 'gi'), kind: 'trait', render: (s, m) => `${s} is a ${m[1]}` },
  { re: new RegExp(`\\bI(?: am|'m) allergic to ${clause}`, 'gi'), kind: 'fact', render: (s, m) => `${s} is allergic to ${m[1]}` },
];

const third = (v: string) => ({ love: 'loves', like: 'likes', enjoy: 'enjoys', adore: 'adores' })[v.toLowerCase()] ?? `${v}s`;
const negative = (v: string) => ({ hate: 'hates', dislike: 'dislikes' })[v.toLowerCase()] ?? 'does not like';
const possessive = (s: string) => (s === 'The user' ? "The user's" : `${s}'s`);
function thirdVerb(rest: string): string {
  const [verb, ...tail] = rest.split(' ');
  const v = /(s|sh|ch|x|o)$/.test(verb) ? `${verb}es` : /[^aeiou]y$/.test(verb) ? `${verb.slice(0, -1)}ies` : `${verb}s`;
  return [v, ...tail].join(' ');
}

export class RuleBasedInference implements Inference {
  readonly modelId = 'rules-v1';

  async extract(input: InferenceInput): Promise<InferredFact[]> {
    const subject = input.userName?.trim() || 'The user';
    const wanted = kindsFromInstructions(input.customInstructions);
    const out: InferredFact[] = [];
    const seen = new Set<string>();
    // Clauses: sentences, also split before "and I / but I / so I" so one statement does not swallow the next.
    const clauses = userUtterances(input).flatMap((u) => u.split(/(?<=[.!?;])\s+|,?\s+(?:and|but|so)\s+(?=I\b)/));
    for (const utterance of clauses) {
      for (const p of PATTERNS) {
        p.re.lastIndex = 0;
        let m: RegExpExecArray | null;
        while ((m = p.re.exec(utterance))) {
          const text = `${p.render(subject, m).replace(/\s+/g, ' ').trim().replace(/[,\s]+$/, '')}.`;
          const key = text.toLowerCase();
          if (!seen.has(key) && wanted.has(p.kind)) {
            seen.add(key);
            out.push({ kind: p.kind, text });
          }
        }
      }
    }
    return out;
  }
}

/** "only preferences", "extract facts and traits": the kinds named; all kinds when none is named. */
function kindsFromInstructions(instructions?: string | null): Set<FactKind> {
  const all: FactKind[] = ['preference', 'trait', 'fact'];
  if (!instructions) return new Set(all);
  const named = all.filter((k) => new RegExp(`\\b${k}s?\\b`, 'i').test(instructions));
  return new Set(named.length ? named : all);
}
