import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * A read model owns its queries: `projections/<name>/` holds the projection and every read and write of its tables
 * (`<name>.queries.ts`), and no other source file names a read-model table (`rm_*`), not even in a comment, so
 * finding who reads a table means opening one folder. Tests may name the tables (they inspect the read models), and
 * the tables that are not read models (leases, caches, the catalog, the log) keep their SQL where it is.
 *
 * Scanned: apps/ and libs/. Not bench/: its reports name tables to break the disk down per table (the soak's
 * recorded-queries share), which is a measurement of the storage, not a read of a read model.
 */
const root = join(__dirname, '..', '..');
const SCANNED = ['apps', 'libs'];
const TEST_FILE = /\.(spec|e2e|int)\.ts$/;
/** A read-model table's name (`rm_items`), not a word that merely contains the letters (`form_data`). */
const TABLE = /\brm_\w/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !TEST_FILE.test(entry.name) ? [path] : [];
  });
}

describe('read models own their queries', () => {
  const files = SCANNED.flatMap((dir) => sources(join(root, dir)));

  it('scans the source files', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('no source file outside projections/ names a read-model table (rm_*)', () => {
    const offenders = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (TABLE.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });
});
