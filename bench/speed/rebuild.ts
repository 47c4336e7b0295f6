import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** One projection's rebuild as the CLI reports it. */
export interface RebuildLine {
  projection: string;
  /** the events this projection handles (its own event types), not the whole log */
  events: number;
  position: number;
  ms: number;
  /** handled events per second */
  eventsPerSecond: number;
  /** the rebuild's log (every event up to its position, each counted once) per second of this projection's pass */
  logEventsPerSecond: number;
  indexes?: number;
}

/** Log events (each counted once) over a stretch of the rebuild. */
export interface LogRate {
  logEvents: number;
  ms: number;
  logEventsPerSecond: number;
}

export interface RebuildResult {
  command: string;
  /** wall time of the whole CLI process, start-up included */
  wallMs: number;
  projections: RebuildLine[];
  /** the log the rebuild replayed: its events up to the highest position a projection reached */
  log: { events: number; position: number };
  /** every projection in turn (read models and search index): the log's events once, over the time of all passes */
  whole: LogRate;
  /** the read models alone (the search index re-writes the engine, listed apart in `projections`) */
  readModels: LogRate;
  output: string[];
  exitCode: number | null;
}

const LINE = /^(\S+): rebuilt (?:(\d+) index\(es\) )?from (\d+) events up to position (\d+) in (\d+) ms \((\d+) events\/s\)/;

/** Parses what `crs projections rebuild` prints, one line per projection (its handled events). */
export function parseRebuildOutput(lines: string[]): Omit<RebuildLine, 'logEventsPerSecond'>[] {
  const out: Omit<RebuildLine, 'logEventsPerSecond'>[] = [];
  for (const line of lines) {
    const m = LINE.exec(line.trim());
    if (!m) continue;
    out.push({ projection: m[1], ...(m[2] !== undefined ? { indexes: Number(m[2]) } : {}), events: Number(m[3]), position: Number(m[4]), ms: Number(m[5]), eventsPerSecond: Number(m[6]) });
  }
  return out;
}

/** The highest position any projection of the CLI's output reached (what to count the log's events up to). */
export function rebuiltPosition(lines: string[]): number {
  return Math.max(0, ...parseRebuildOutput(lines).map((p) => p.position));
}

/**
 * A projection reports the events it handles; one log event is handled by several projections (an item's ingest
 * feeds items, blob-refs, the outbox and the search index), so adding those up counts it several times. The rates
 * here divide the log's own event count (`logEvents`, counted by the caller up to `rebuiltPosition`) by the time.
 */
export function summariseRebuild(command: string, wallMs: number, output: string[], exitCode: number | null, logEvents: number): RebuildResult {
  const rate = (ms: number): number => Math.round((logEvents / Math.max(1, ms)) * 1000);
  const projections = parseRebuildOutput(output).map((p) => ({ ...p, logEventsPerSecond: rate(p.ms) }));
  const over = (lines: RebuildLine[]): LogRate => {
    const ms = lines.reduce((a, p) => a + p.ms, 0);
    return { logEvents, ms, logEventsPerSecond: rate(ms) };
  };
  return {
    command,
    wallMs,
    projections,
    log: { events: logEvents, position: rebuiltPosition(output) },
    whole: over(projections),
    readModels: over(projections.filter((p) => p.projection !== 'search-index')),
    output,
    exitCode,
  };
}

/**
 * Runs `node bin/crs.js projections rebuild <name>` against the running service's Postgres (DATABASE_URL) and data
 * directory (the search index generation is written next to the live one), parses each projection's line and
 * rates the whole rebuild by the log's own event count.
 */
export async function runRebuildCli(
  root: string,
  env: Record<string, string>,
  countLogEvents: (upToPosition: number) => Promise<number>,
  name = 'all',
  nodeFlags: string[] = [],
): Promise<RebuildResult> {
  const args = [...nodeFlags, join(root, 'bin/crs.js'), 'projections', 'rebuild', name];
  const started = Date.now();
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const output = [...stdout.split('\n'), ...stderr.split('\n')].filter((l) => l.trim());
  const wallMs = Date.now() - started;
  if (code !== 0) throw new Error(`rebuild failed (exit ${code}): ${output.join('\n').slice(-2000)}`);
  const logEvents = await countLogEvents(rebuiltPosition(output));
  return summariseRebuild(`node ${args.map((a) => a.replace(root + '/', '')).join(' ')}`, wallMs, output, code, logEvents);
}
