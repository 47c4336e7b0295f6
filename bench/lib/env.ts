import { execFileSync } from 'node:child_process';
import { cpus, totalmem, loadavg, platform, release } from 'node:os';

export interface RunEnvironment {
  commit: string;
  dirty: boolean;
  /** `git status --porcelain` lines (what was uncommitted when the run started). */
  dirtyFiles: string[];
  machine: { cores: number; cpu: string; memoryGiB: number; node: string; platform: string; loadAverageAtStart: number[] };
  startedAt: string;
}

export function runEnvironment(root = process.cwd()): RunEnvironment {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const status = git('status', '--porcelain');
  const dirtyFiles = status ? status.split('\n') : [];
  return {
    commit: git('rev-parse', 'HEAD') || 'unknown',
    dirty: dirtyFiles.length > 0,
    dirtyFiles,
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      node: process.version,
      platform: `${platform()} ${release()}`,
      loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    startedAt: new Date().toISOString(),
  };
}

export function environmentMarkdown(e: RunEnvironment): string {
  const dirty = e.dirty ? ` (dirty tree: ${e.dirtyFiles.length} uncommitted path(s): ${e.dirtyFiles.slice(0, 12).map((l) => `\`${l.trim()}\``).join(', ')}${e.dirtyFiles.length > 12 ? ', ...' : ''})` : ' (clean tree)';
  return [
    `- commit: \`${e.commit}\`${dirty}`,
    `- machine: ${e.machine.cores} cores (${e.machine.cpu}), ${e.machine.memoryGiB} GiB, node ${e.machine.node}, ${e.machine.platform}`,
    `- load average at start (1/5/15 min): ${e.machine.loadAverageAtStart.join(' / ')} (other work shares the machine: timings are noisy, compare within one run)`,
    `- started: ${e.startedAt}`,
  ].join('\n');
}
