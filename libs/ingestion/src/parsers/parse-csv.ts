import { parse } from 'csv-parse/sync';
import { ParseError } from './parse-error';

const DELIMITERS = [',', ';', '\t', '|'];
const NUMERIC = /^[-+]?(?:\d[\d,]*)?(?:\.\d+)?(?:e[-+]?\d+)?%?$/i;

/** The candidate delimiter seen most often in the first line, outside quotes (comma on a tie). */
function guessDelimiter(text: string): string {
  const newline = text.indexOf('\n');
  const firstLine = (newline < 0 ? text : text.slice(0, newline)).replace(/"[^"]*"/g, '');
  let best = ',';
  let bestCount = 0;
  for (const delimiter of DELIMITERS) {
    const count = firstLine.split(delimiter).length - 1;
    if (count > bestCount) [best, bestCount] = [delimiter, count];
  }
  return best;
}

const clean = (cell: string) => cell.replace(/\s+/g, ' ').trim();

/**
 * One line per row, `header: value; header: value` (empty cells left out), so a row found on its
 * own says what each value is. Rows are separated by a blank line: to the chunker each row is a
 * paragraph, and a chunk never ends inside a row. A first row that is all numbers is data, not a
 * header; columns without a header are called `column N`.
 */
export function parseCsv(text: string, options: { tabSeparated: boolean }): string {
  let rows: string[][];
  try {
    rows = parse(text, {
      delimiter: options.tabSeparated ? '\t' : guessDelimiter(text),
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
    }) as string[][];
  } catch (cause) {
    const line = (cause as { lines?: unknown }).lines;
    throw new ParseError('CORRUPT_FILE', `The CSV file is malformed${typeof line === 'number' ? ` near line ${line}` : ''}.`, { format: 'csv', cause });
  }
  rows = rows.filter((row) => row.some((cell) => clean(cell) !== ''));
  const first = rows[0];
  if (!first) return '';
  const hasHeader = !first.every((cell) => NUMERIC.test(clean(cell)));
  const header = hasHeader ? first.map(clean) : [];
  const columnName = (i: number) => header[i] || `column ${i + 1}`;
  return (hasHeader ? rows.slice(1) : rows)
    .map((row) =>
      row
        .map((cell, i) => [columnName(i), clean(cell)] as const)
        .filter(([, value]) => value !== '')
        .map(([name, value]) => `${name}: ${value}`)
        .join('; '),
    )
    .join('\n\n');
}
