import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface RebuildLine {
  projection: string;
  events: number;
  position: number;
  ms: number;
  eventsPerSecond: number;
  indexes?: number;
}

export interface RebuildResult {
  command: string;
  /** wall time of the whole CLI process, start-up included */
  wallMs: number;
  projections: RebuildLine[];
  /** events and time summed over the read models (the search index is listed apart: it re-writes the engine) */
  readModels: { events: number; ms: number; eventsPerSecond: number };
  output: string[];
  exitCode: number | null;
}

const LINE = /^(\S+): rebuilt (?:(\d+) index\(es\) )?from (\d+) events up to position (\d+) in (\d+) ms \((\d+) events\/s\)/;

/** Parses what `crs projections rebuild` prints, one line per projection. */
export function parseRebuildOutput(lines: string[]): RebuildLine[] {
  const out: RebuildLine[] = [];
  for (const line of lines) {
    const m = LINE.exec(line.trim());
    if (!m) continue;
    out.push({ projection: m[1], ...(m[2] !== undefined ? { indexes: Number(m[2]) } : {}), events: Number(m[3]), position: Number(m[4]), ms: Number(m[5]), eventsPerSecond: Number(m[6]) });
  }
  return out;
}

export function summariseRebuild(command: string, wallMs: number, output: string[], exitCode: number | null): RebuildResult {
  const projections = parseRebuildOutput(output);
  const readModels = projections.filter((p) => p.projection !== 'search-index');
  const events = readModels.reduce((a, p) => a + p.events, 0);
  const ms = readModels.reduce((a, p) => a + p.ms, 0);
  return { command, wallMs, projections, readModels: { events, ms, eventsPerSecond: Math.round((events / Math.max(1, ms)) * 1000) }, output, exitCode };
}

/**
 * Runs `node bin/crs.js projections rebuild <name>` against the running service's Postgres (DATABASE_URL) and data
 * directory (the search index generation is written next to the live one), and parses its events/s.
 */
export async function runRebuildCli(root: string, env: Record<string, string>, name = 'all', nodeFlags: string[] = []): Promise<RebuildResult> {
  const args = [...nodeFlags, join(root, 'bin/crs.js'), 'projections', 'rebuild', name];
  const started = Date.now();
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const output = [...stdout.split('\n'), ...stderr.split('\n')].filter((l) => l.trim());
  const result = summariseRebuild(`node ${args.map((a) => a.replace(root + '/', '')).join(' ')}`, Date.now() - started, output, code);
  if (code !== 0) throw new Error(`rebuild failed (exit ${code}): ${output.join('\n').slice(-2000)}`);
  return result;
}
