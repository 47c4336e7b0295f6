import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

/**
 * package.json promises a Node range (`engines.node`); every locked package must run on the lowest Node of that
 * range, and the install must refuse a mismatch (`engine-strict` in the project's .npmrc, which `.ci/run`'s
 * `npm install` reads) rather than warn and carry on.
 */
const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: unknown }>;
};

describe('Node engines', () => {
  const lowest = semver.minVersion(pkg.engines.node)!.version;

  it(`every locked package declares a Node range that includes ${lowest} (the lowest package.json allows)`, () => {
    const misfits: string[] = [];
    let checked = 0;
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = nodeRange(entry.engines);
      if (!path || range === undefined) continue;
      checked++;
      if (!semver.satisfies(lowest, range)) misfits.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version}: node ${range}`);
    }
    expect(checked).toBeGreaterThan(100);
    expect(misfits).toEqual([]);
  });

  it('the install is engine-strict', () => {
    const npmrc = readFileSync(join(root, '.npmrc'), 'utf8');
    expect(npmrc).toMatch(/^engine-strict\s*=\s*true\s*$/m);
  });
});

/** `engines.node` as npm reads it (an object field; old packages may carry an array of strings, which npm ignores). */
function nodeRange(engines: unknown): string | undefined {
  if (!engines || typeof engines !== 'object' || Array.isArray(engines)) return undefined;
  const node = (engines as { node?: unknown }).node;
  return typeof node === 'string' ? node : undefined;
}
