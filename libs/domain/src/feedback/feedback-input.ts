import { characterLength } from '../text-length';
import { DomainError, invalid } from '../errors';
import type { FeedbackRating, FeedbackSource, GroundTruth } from './feedback.events';

/** Limits of a feedback submission (spec: Limits). Characters are Unicode code points. */
export const FEEDBACK_LIMITS = {
  feedbackChars: 8000,
  answerChars: 8000,
  sourceIds: 100,
  sourceIdChars: 256,
  metadataEntries: 20,
  metadataKeyChars: 64,
  metadataValueChars: 512,
} as const;

export const FEEDBACK_RATINGS: readonly FeedbackRating[] = ['positive', 'negative', 'neutral'];
export const FEEDBACK_SOURCES: readonly FeedbackSource[] = ['user', 'agent'];

/** Any UUID (the service issues v4 ids, but the spec only asks for "a UUID"). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The submission fields other than the scope (database/collection and their aliases). */
export interface FeedbackInput {
  request_id?: unknown;
  feedback?: unknown;
  ground_truth?: unknown;
  rating?: unknown;
  source?: unknown;
  metadata?: unknown;
}

export interface NormalizedFeedback {
  requestId: string;
  feedback: string | null;
  rating: FeedbackRating | null;
  source: FeedbackSource;
  groundTruth: GroundTruth | null;
  metadata: Record<string, string>;
}

const chars = characterLength;
const blank = (s: string) => s.trim() === '';
const rule = (code: string, message: string) => new DomainError('validation', code, message);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates and normalizes a submission (pure; nothing is recorded when it throws). Blank strings count
 * as not sent, duplicate source ids collapse, blank ones are dropped; an omitted rating stays null
 * (a comment without a rating); `source` defaults to `user`.
 */
export function normalizeFeedback(input: FeedbackInput): NormalizedFeedback {
  const requestId = input.request_id;
  if (requestId === undefined || requestId === null || requestId === '') {
    throw invalid("request_id is required: the query's meta.request_id (or X-Request-ID header), sent exactly as received");
  }
  if (typeof requestId !== 'string' || !UUID.test(requestId)) {
    throw invalid("request_id must be a UUID: the query's meta.request_id (or X-Request-ID header), sent exactly as received");
  }

  let rating: FeedbackRating | null = null;
  if (input.rating !== undefined && input.rating !== null) {
    if (typeof input.rating !== 'string' || !FEEDBACK_RATINGS.includes(input.rating as FeedbackRating)) {
      throw rule('INVALID_RATING', `rating must be one of ${FEEDBACK_RATINGS.join(', ')} (or omitted for a comment without a rating)`);
    }
    rating = input.rating as FeedbackRating;
  }

  let source: FeedbackSource = 'user';
  if (input.source !== undefined && input.source !== null) {
    if (typeof input.source !== 'string' || !FEEDBACK_SOURCES.includes(input.source as FeedbackSource)) {
      throw rule('INVALID_SOURCE', `source must be one of ${FEEDBACK_SOURCES.join(', ')}`);
    }
    source = input.source as FeedbackSource;
  }

  let feedback: string | null = null;
  if (input.feedback !== undefined && input.feedback !== null) {
    if (typeof input.feedback !== 'string') throw invalid('feedback must be a string');
    // A blank value counts as absent (spec), whatever its length: only a value that is kept is measured.
    if (!blank(input.feedback)) {
      if (chars(input.feedback) > FEEDBACK_LIMITS.feedbackChars) {
        throw rule('FEEDBACK_TOO_LONG', `feedback is longer than ${FEEDBACK_LIMITS.feedbackChars} characters`);
      }
      feedback = input.feedback;
    }
  }

  const groundTruth = normalizeGroundTruth(input.ground_truth);
  const metadata = normalizeMetadata(input.metadata);

  if (feedback === null && groundTruth === null) {
    throw rule('FEEDBACK_EMPTY', 'feedback carries no usable signal: send a non-blank feedback, or ground_truth with a non-blank answer or source_ids');
  }
  return { requestId: requestId.toLowerCase(), feedback, rating, source, groundTruth, metadata };
}

/** null when absent or when it carries nothing usable (blank answer, no non-blank source ids). */
function normalizeGroundTruth(value: unknown): GroundTruth | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw invalid('ground_truth must be an object with answer and/or source_ids');
  for (const key of Object.keys(value)) {
    if (key !== 'answer' && key !== 'source_ids') throw invalid(`ground_truth.${key} is not a ground_truth field (answer, source_ids)`);
  }
  let answer: string | null = null;
  if (value.answer !== undefined && value.answer !== null) {
    if (typeof value.answer !== 'string') throw invalid('ground_truth.answer must be a string');
    if (!blank(value.answer)) {
      if (chars(value.answer) > FEEDBACK_LIMITS.answerChars) {
        throw rule('FEEDBACK_TOO_LONG', `ground_truth.answer is longer than ${FEEDBACK_LIMITS.answerChars} characters`);
      }
      answer = value.answer;
    }
  }
  const sourceIds: string[] = [];
  if (value.source_ids !== undefined && value.source_ids !== null) {
    if (!Array.isArray(value.source_ids)) throw invalid('ground_truth.source_ids must be an array of strings');
    const seen = new Set<string>();
    for (const id of value.source_ids) {
      if (typeof id !== 'string') throw invalid('ground_truth.source_ids must contain only strings');
      if (blank(id) || seen.has(id)) continue;
      if (chars(id) > FEEDBACK_LIMITS.sourceIdChars) {
        throw rule('SOURCE_ID_TOO_LONG', `ground_truth.source_ids has an id longer than ${FEEDBACK_LIMITS.sourceIdChars} characters`);
      }
      seen.add(id);
      sourceIds.push(id);
    }
    if (sourceIds.length > FEEDBACK_LIMITS.sourceIds) {
      throw rule('TOO_MANY_SOURCE_IDS', `ground_truth.source_ids has ${sourceIds.length} distinct ids; at most ${FEEDBACK_LIMITS.sourceIds} are allowed`);
    }
  }
  if (answer === null && sourceIds.length === 0) return null;
  return { answer, sourceIds };
}

function normalizeMetadata(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw invalid('metadata must be an object of string keys to string values');
  const entries = Object.entries(value);
  if (entries.length > FEEDBACK_LIMITS.metadataEntries) {
    throw rule('METADATA_TOO_LARGE', `metadata has ${entries.length} entries; at most ${FEEDBACK_LIMITS.metadataEntries} are allowed`);
  }
  const out: Record<string, string> = {};
  for (const [key, v] of entries) {
    if (key.length === 0) throw invalid('metadata keys must be non-empty');
    if (chars(key) > FEEDBACK_LIMITS.metadataKeyChars) {
      throw rule('METADATA_TOO_LARGE', `metadata key '${key.slice(0, 20)}...' is longer than ${FEEDBACK_LIMITS.metadataKeyChars} characters`);
    }
    if (typeof v !== 'string') throw invalid(`metadata.${key} must be a string`);
    if (chars(v) > FEEDBACK_LIMITS.metadataValueChars) {
      throw rule('METADATA_TOO_LARGE', `metadata.${key} is longer than ${FEEDBACK_LIMITS.metadataValueChars} characters`);
    }
    // Defined, not assigned: a key named "__proto__" is kept as sent (an assignment set the prototype and lost it).
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
