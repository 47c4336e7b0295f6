import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/spec-coverage.md quotes the retrieval-quality run in bench/results/quality.md. These checks keep the quote
 * and the file in step: whenever a new run replaces the file, the rows citing it must be updated too.
 *
 * What a citing line (one that names `bench/results/quality.md`) may say, and what it is checked against:
 * - `bench/results/quality.md at <sha>`: the run's commit (the file's `- commit:` line);
 * - `<embedder> at <sha>` (`glove at e440ea7`): that embedder's run (its `- embedder` line);
 * - `LoCoMo dev R@10 <hybrid> (thinking <thinking>)` and `SciFact nDCG@10 <hybrid> hybrid, <thinking> thinking`:
 *   the offline default's (glove) rows "hybrid (default alpha)" and "hybrid, mode \"thinking\"".
 */
const root = join(__dirname, '..', '..');
const quality = parseQualityResults(readFileSync(join(root, 'bench/results/quality.md'), 'utf8'));
const citing = readFileSync(join(root, 'docs/spec-coverage.md'), 'utf8')
  .split('\n')
  .filter((line) => line.includes('bench/results/quality.md'));

const HYBRID = 'hybrid (default alpha)';
const THINKING = 'hybrid, mode "thinking"';

describe('docs/spec-coverage.md cites bench/results/quality.md as it is', () => {
  it('has citing rows, and bench/results/quality.md names its commits', () => {
    expect(citing.length).toBeGreaterThan(0);
    expect(quality.runCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(Object.keys(quality.embedderCommits)).toContain('glove');
  });

  it('every commit cited for the file or for an embedder is the one the file records', () => {
    const cited: Array<{ what: string; sha: string; recorded: string | undefined }> = [];
    for (const line of citing) {
      for (const m of line.matchAll(/bench\/results\/quality\.md at ([0-9a-f]{7,40})\b/g)) {
        cited.push({ what: 'the run', sha: m[1], recorded: quality.runCommit });
      }
      for (const m of line.matchAll(/\b(glove|use) at ([0-9a-f]{7,40})\b/g)) {
        cited.push({ what: `embedder ${m[1]}`, sha: m[2], recorded: quality.embedderCommits[m[1]] });
      }
    }
    expect(cited.length).toBeGreaterThan(0);
    const same = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);
    const wrong = cited.filter((c) => !c.recorded || !same(c.sha, c.recorded));
    expect(wrong.map((c) => `${c.what}: cited ${c.sha}, recorded ${c.recorded ?? 'nothing'}`)).toEqual([]);
  });

  it('the target figures cited are the offline default\'s in the file', () => {
    const locomo = citing.flatMap((line) => [...line.matchAll(/LoCoMo dev R@10 (\d+\.\d) \(thinking (\d+\.\d)\)/g)]);
    const scifact = citing.flatMap((line) => [...line.matchAll(/SciFact nDCG@10 (\d\.\d{3}) hybrid, (\d\.\d{3}) thinking/g)]);
    expect(locomo.length).toBeGreaterThan(0);
    expect(scifact.length).toBeGreaterThan(0);
    for (const m of locomo) {
      expect({ hybrid: m[1], thinking: m[2] }).toEqual({
        hybrid: quality.cell('LoCoMo', `glove: ${HYBRID}`, 'R@10'),
        thinking: quality.cell('LoCoMo', `glove: ${THINKING}`, 'R@10'),
      });
    }
    for (const m of scifact) {
      expect({ hybrid: m[1], thinking: m[2] }).toEqual({
        hybrid: quality.cell('SciFact', `glove: ${HYBRID}`, 'nDCG@10'),
        thinking: quality.cell('SciFact', `glove: ${THINKING}`, 'nDCG@10'),
      });
    }
  });
});

interface QualityResults {
  runCommit: string | undefined;
  embedderCommits: Record<string, string>;
  /** A table cell by the section heading's first word, the row's first cell and the column's header. */
  cell(section: string, row: string, column: string): string | undefined;
}

function parseQualityResults(markdown: string): QualityResults {
  const lines = markdown.split('\n');
  const runCommit = lines.map((l) => /^- commit: `([0-9a-f]{40})`/.exec(l)?.[1]).find(Boolean);
  const embedderCommits: Record<string, string> = {};
  for (const line of lines) {
    const m = /^- embedder `([^`]+)`:.*\bcommit `([0-9a-f]{7,40})`/.exec(line);
    if (m) embedderCommits[m[1]] = m[2];
  }
  // section → row label → column header → cell
  const tables = new Map<string, Map<string, Map<string, string>>>();
  let section = '';
  let header: string[] | undefined;
  for (const line of lines) {
    if (line.startsWith('## ')) {
      section = line.slice(3).split(' ')[0];
      header = undefined;
      continue;
    }
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (!header) {
      header = cells;
      continue;
    }
    if (cells.every((c) => /^-+$/.test(c))) continue;
    const rows = tables.get(section) ?? new Map<string, Map<string, string>>();
    tables.set(section, rows);
    if (!rows.has(cells[0])) rows.set(cells[0], new Map(header.map((h, i) => [h, cells[i]])));
  }
  return { runCommit, embedderCommits, cell: (s, r, c) => tables.get(s)?.get(r)?.get(c) };
}
