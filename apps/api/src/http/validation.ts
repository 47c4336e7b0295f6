import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { invalid } from '@crs/domain/errors';

/** Deprecated request fields and their replacements; a validation error on one of them adds `detail`. */
export const DEPRECATED_FIELDS: Record<string, string> = { tenant_id: 'database', sub_tenant_id: 'collection', sub_tenant_ids: 'collections' };

function flatten(errors: ValidationError[], parent = ''): { path: string; messages: string[] }[] {
  return errors.flatMap((e) => {
    const path = parent ? `${parent}.${e.property}` : e.property;
    // Constraints that state one rule together (an integer from 1 to 100: IsInt, Min, Max) share its message: said once.
    const own = e.constraints ? [{ path, messages: [...new Set(Object.values(e.constraints))] }] : [];
    return [...own, ...flatten(e.children ?? [], path)];
  });
}

/**
 * DTO validation: unknown fields and wrong types are 400 INVALID_INPUT naming the field. Errors on a
 * deprecated field carry `detail` with the deprecated and preferred names.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => {
      const flat = flatten(errors);
      const message = flat.map((f) => f.messages.map((m) => (m.includes(f.path.split('.').pop()!) ? m.replace(/^property /, "field ") : `${f.path}: ${m}`)).join('; ')).join('; ');
      const first = flat[0]?.path.split('.')[0];
      const preferred = first ? DEPRECATED_FIELDS[first] : undefined;
      return invalid(
        message || 'Invalid request',
        preferred ? { error_code: 'INVALID_INPUT', message, deprecated: true, deprecated_field: first, preferred_field: preferred, success: false } : undefined,
      );
    },
  });
}

/**
 * Checks a value parsed by hand (the text fields of a multipart body) against a request DTO with the same rules and
 * errors as a JSON body: unknown fields and wrong types are 400 INVALID_INPUT naming the field.
 */
export async function validateParsed<T extends object>(dto: new () => T, value: Record<string, unknown>): Promise<T> {
  return (await createValidationPipe().transform(value, { type: 'body', metatype: dto })) as T;
}
