import { readFileSync } from 'node:fs';

/**
 * Summaries of a V8 .cpuprofile (node --cpu-prof): self time of the main thread by function and by package,
 * optionally only inside wall-clock windows (phases), to say what dominates each phase.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  window: string;
  sampledMs: number;
  /** share of the window's samples that were not idle */
  busyShare: number;
  byCategory: { category: string; ms: number; share: number }[];
  byFunction: { fn: string; ms: number; share: number }[];
}

/** What a script URL belongs to: a package, a project file, node internals, or a V8 pseudo-node. */
export function categoryOf(url: string, functionName: string): string {
  if (!url) return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node internals';
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length).replace(/^file:\/\//, '');
  return url.replace(/^file:\/\//, '');
}

/**
 * @param windows epoch-ms windows; `processStartMs` is when the profiled process started (the profile's time origin)
 */
export function summariseProfile(file: string, processStartMs: number, windows: { name: string; start: number; end: number }[], top = 15): ProfileSummary[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const all = [{ name: 'whole run', start: -Infinity, end: Infinity }, ...windows];
  const acc = all.map(() => ({ total: 0, idle: 0, cat: new Map<string, number>(), fn: new Map<string, number>() }));
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (dt <= 0) continue;
    const at = processStartMs + (t - profile.startTime) / 1000;
    const node = nodes.get(profile.samples[i]);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const category = categoryOf(url, functionName);
    const fn = `${functionName || '(anonymous)'} ${url ? `${categoryOf(url, functionName)}:${lineNumber + 1}` : ''}`.trim();
    all.forEach((w, k) => {
      if (at < w.start || at > w.end) return;
      const a = acc[k];
      a.total += dt;
      if (functionName === '(idle)') {
        a.idle += dt;
        return;
      }
      a.cat.set(category, (a.cat.get(category) ?? 0) + dt);
      a.fn.set(fn, (a.fn.get(fn) ?? 0) + dt);
    });
  }
  return all.map((w, k) => {
    const a = acc[k];
    const busy = a.total - a.idle;
    const list = (m: Map<string, number>, key: 'category' | 'fn') =>
      [...m.entries()]
        .sort((x, y) => y[1] - x[1])
        .slice(0, top)
        .map(([name, ms]) => ({ [key]: name, ms: Math.round(ms), share: Math.round((ms / Math.max(busy, 1e-9)) * 1000) / 1000 }));
    return {
      window: w.name,
      sampledMs: Math.round(a.total),
      busyShare: Math.round((busy / Math.max(a.total, 1e-9)) * 1000) / 1000,
      byCategory: list(a.cat, 'category') as ProfileSummary['byCategory'],
      byFunction: list(a.fn, 'fn') as ProfileSummary['byFunction'],
    };
  });
}
