/**
 * Values a request may carry into the log and the read models.
 *
 * Postgres text and jsonb cannot hold U+0000 or an unpaired UTF-16 surrogate (`\ud800` alone), so a request carrying
 * either in a field that is stored is refused with 400 naming the field, rather than failing with 500 at the append
 * (which the SDK retries, though it can never succeed). Content (memory text, pairs, app content, files) is stored as
 * bytes and may hold them.
 *
 * The walk is iterative (a body nested 10,000 levels deep once overflowed the stack of a recursive one and took the
 * process down), and it also bounds the shape of a JSON body: nesting depth and fields per object. Beyond them a
 * request is refused before any validation or work is spent on it (300,000 unknown fields once held the event loop
 * for a minute while the validator listed them all).
 */
export const JSON_SHAPE_LIMITS = { depth: 64, fieldsPerObject: 1000 };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(s: string, path: string): string | null {
  if (s.includes('\u0000')) return `${path} contains the NUL character (U+0000), which cannot be stored; remove it`;
  if (LONE_SURROGATE.test(s)) return `${path} contains an unpaired UTF-16 surrogate (half of a character such as \\ud800), which cannot be stored`;
  return null;
}

/** The first problem with a JSON value (an unstorable string or key, or a shape beyond the limits), or null. */
export function jsonInputProblem(value: unknown, root: string, limits = JSON_SHAPE_LIMITS): string | null {
  const stack: [unknown, string, number][] = [[value, root, 0]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    const at = path || 'value';
    if (typeof v === 'string') {
      const problem = stringProblem(v, at);
      if (problem) return problem;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limits.depth) return `${at} is nested more than ${limits.depth} levels deep`;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`, depth + 1]);
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > limits.fieldsPerObject) return `${at} has ${keys.length} fields, more than ${limits.fieldsPerObject}`;
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const keyPath = path ? `${path}.${key}` : key;
      const problem = stringProblem(key, `${keyPath} (a field name)`);
      if (problem) return problem;
      stack.push([(v as Record<string, unknown>)[key], keyPath, depth + 1]);
    }
  }
  return null;
}
