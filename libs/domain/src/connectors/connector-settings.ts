import { invalid } from '../errors';
import { characterLength } from '../text-length';

/** Custom ingestion instructions, connector or resource: at most this many characters (code points, not bytes). */
export const MAX_CUSTOM_INSTRUCTIONS_CHARACTERS = 4000;

/** `sync_interval_seconds` when none is sent: one hour. */
export const DEFAULT_SYNC_INTERVAL_SECONDS = 3600;
/**
 * Bounds of `sync_interval_seconds`, inclusive, whole seconds: at least a minute (a shorter interval would start a
 * sync before the previous one of a large resource had finished, and spend the provider's rate limit on nothing) and
 * at most 30 days (a longer one is a paused connector; pause says so).
 */
export const SYNC_INTERVAL_BOUNDS = { min: 60, max: 2_592_000 } as const;

/** Refuses instructions longer than the limit (400 INVALID_INPUT naming the field), counted in characters. */
export function checkCustomInstructions(value: string, field = 'custom_instructions'): void {
  const length = characterLength(value);
  if (length > MAX_CUSTOM_INSTRUCTIONS_CHARACTERS) {
    throw invalid(`${field} is ${length} characters long; the limit is ${MAX_CUSTOM_INSTRUCTIONS_CHARACTERS} characters`);
  }
}

/** The stored form of sent instructions: "" clears them (null). */
export function storedInstructions(value: string, field = 'custom_instructions'): string | null {
  checkCustomInstructions(value, field);
  return value === '' ? null : value;
}

/** Refuses an interval that is not a whole number of seconds within SYNC_INTERVAL_BOUNDS (400 INVALID_INPUT). */
export function checkSyncInterval(value: number, field = 'sync_interval_seconds'): void {
  if (!Number.isInteger(value) || value < SYNC_INTERVAL_BOUNDS.min || value > SYNC_INTERVAL_BOUNDS.max) {
    throw invalid(`${field} must be a whole number of seconds from ${SYNC_INTERVAL_BOUNDS.min} to ${SYNC_INTERVAL_BOUNDS.max} (30 days)`);
  }
}

/** Refuses a missing or blank required string (400 INVALID_INPUT naming the field). */
export function checkRequired(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${field} is required and may not be blank`);
}
