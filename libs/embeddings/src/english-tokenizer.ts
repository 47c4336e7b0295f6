/**
 * Lowercase English word tokenizer shared by the offline embedders.
 *
 * Words are runs of letters and digits (any script), optionally joined by apostrophes;
 * everything else (spaces, punctuation, hyphens, underscores) separates words.
 * Contractions follow GloVe's Penn-Treebank habits: "don't" gives "do" + "not", and the clitics
 * 's 're 'll 've 'd 'm are dropped (function words with near-zero SIF weight anyway).
 */
const WORD = /[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu;
const DROPPED_CLITICS = ["'s", "'re", "'ll", "'ve", "'d", "'m"];
const NEGATED_STEMS: Record<string, string> = { ca: 'can', wo: 'will', sha: 'shall', ai: 'is' };

export function tokenizeEnglish(text: string): string[] {
  const normalized = text.normalize('NFKC').toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'");
  const tokens: string[] = [];
  for (const match of normalized.matchAll(WORD)) {
    const word = match[0];
    if (!word.includes("'")) {
      tokens.push(word);
      continue;
    }
    if (word.endsWith("n't") && word.length > 3) {
      const stem = word.slice(0, -3);
      tokens.push(NEGATED_STEMS[stem] ?? stem, 'not');
      continue;
    }
    const clitic = DROPPED_CLITICS.find((c) => word.endsWith(c) && word.length > c.length);
    tokens.push(clitic ? word.slice(0, -clitic.length) : word);
  }
  return tokens;
}

/** True when `word` is something tokenizeEnglish can produce (used to filter the GloVe vocabulary). */
export function isTokenizerWord(word: string): boolean {
  return /^[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*$/u.test(word) && word === word.toLowerCase();
}
