import { ParseError } from './parse-error';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const PLAIN_KEY = /^[\p{L}\p{N}_$-]+$/u;
const keyPath = (parent: string, key: string) =>
  PLAIN_KEY.test(key) ? (parent ? `${parent}.${key}` : key) : `${parent}[${JSON.stringify(key)}]`;

/**
 * `path: value` lines (`items[0].name: Ada`), depth first in document order, strings with their
 * whitespace collapsed. The lines of each top-level entry (array element, object key, JSON Lines
 * record) are separated from the next entry's by a blank line, so the chunker keeps entries whole.
 */
export function parseJson(text: string, options: { jsonLines: boolean }): string {
  const values = options.jsonLines ? parseLines(text) : [parseValue(text)];
  const entries: string[] = [];
  values.forEach((value, i) => {
    const root = options.jsonLines ? `[${i}]` : '';
    if (!options.jsonLines && value !== null && typeof value === 'object') {
      const children: [string, Json][] = Array.isArray(value)
        ? value.map((child, j) => [`[${j}]`, child])
        : Object.entries(value).map(([key, child]) => [keyPath('', key), child]);
      for (const [path, child] of children) entries.push(flatten(path, child).join('\n'));
      return;
    }
    entries.push(flatten(root, value).join('\n'));
  });
  return entries.filter((entry) => entry !== '').join('\n\n');
}

function parseValue(text: string, line?: number): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (cause) {
    const where = line === undefined ? '' : ` on line ${line}`;
    throw new ParseError('CORRUPT_FILE', `The file is not valid JSON${where}: ${(cause as Error).message}`, { format: 'json', cause });
  }
}

function parseLines(text: string): Json[] {
  const values: Json[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim()) values.push(parseValue(line, i + 1));
  });
  return values;
}

/** Iterative (a deeply nested document must not overflow the stack). */
function flatten(rootPath: string, root: Json): string[] {
  const lines: string[] = [];
  const stack: [string, Json][] = [[rootPath, root]];
  while (stack.length > 0) {
    const [path, value] = stack.pop()!;
    const prefix = path ? `${path}: ` : '';
    if (value === null || typeof value !== 'object') {
      lines.push(prefix + (typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : JSON.stringify(value)));
      continue;
    }
    const children: [string, Json][] = Array.isArray(value)
      ? value.map((child, i) => [`${path}[${i}]`, child])
      : Object.entries(value).map(([key, child]) => [keyPath(path, key), child]);
    if (children.length === 0) lines.push(prefix + (Array.isArray(value) ? '[]' : '{}'));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return lines;
}
