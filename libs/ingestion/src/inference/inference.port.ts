/** Memory inference: the preferences, traits and facts underlying raw input (dialogue, logs, feedback). */
export type FactKind = 'preference' | 'trait' | 'fact';

export interface InferredFact {
  kind: FactKind;
  /** a standalone statement about the user, e.g. "Ann prefers window seats" */
  text: string;
}

export interface InferenceInput {
  text?: string;
  pairs?: { user: string; assistant: string }[];
  userName?: string | null;
  customInstructions?: string | null;
}

export interface Inference {
  /** recorded with every result, so a change of extractor is visible in the log */
  readonly modelId: string;
  extract(input: InferenceInput): Promise<InferredFact[]>;
}

export class InferenceError extends Error {
  constructor(message: string, readonly code: 'remote_failed' | 'remote_timeout' | 'bad_response') {
    super(message);
  }
}

/** The user's own words: the user side of pairs, or the whole text. */
export function userUtterances(input: InferenceInput): string[] {
  if (input.pairs) return input.pairs.map((p) => p.user);
  return input.text ? [input.text] : [];
}
