/**
 * Domain errors carry a stable machine code and a kind; the HTTP layer maps kinds to status codes
 * (docs/errors.md lists every code). No framework imports here.
 */
export type ErrorKind = 'validation' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'too_large' | 'unsupported_media_type' | 'rate_limited' | 'unprocessable' | 'unavailable' | 'internal';

export interface ErrorDetail {
  error_code?: string;
  message?: string;
  deprecated?: boolean;
  deprecated_field?: string;
  preferred_field?: string;
  success?: false;
  [k: string]: unknown;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly detail?: ErrorDetail,
  ) {
    super(message);
  }
}

export const invalid = (message: string, detail?: ErrorDetail) => new DomainError('validation', 'INVALID_INPUT', message, detail);
export const notFound = (code: string, message: string) => new DomainError('not_found', code, message);
export const conflict = (code: string, message: string) => new DomainError('conflict', code, message);

/** A decider's answer to a command its union does not declare (reachable only from untyped code). */
export const unknownCommand = (command: { type: unknown }) => new Error(`unknown command ${String(command.type)}`);
