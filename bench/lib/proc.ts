import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of the service and its Postgres, from /proc (Linux): where the time of a phase goes.
 * - `jsThread`: the service's main thread (JavaScript, the event loop, synchronous native calls);
 * - `otherThreads`: the service's other threads (LanceDB/tokio workers, libuv pool, V8 GC helpers);
 * - `postgres`: every process under the service's process tree whose name starts with postgres, plus the
 *   backends that already exited (the postmaster's reaped-children time).
 * Seconds of CPU since each process/thread started; subtract two samples to get a phase.
 */
export interface CpuSample {
  at: number;
  jsThread: number;
  otherThreads: number;
  postgres: number;
  /** every other descendant (e.g. the CLI when it is a child) */
  other: number;
}

const TICK = 100; // USER_HZ: 100 on every mainstream Linux kernel build (getconf CLK_TCK)

function stat(path: string): { comm: string; ppid: number; cpu: number; children: number } | null {
  try {
    const s = readFileSync(path, 'utf8');
    const close = s.lastIndexOf(')');
    const comm = s.slice(s.indexOf('(') + 1, close);
    const fields = s.slice(close + 2).split(' ');
    // fields[0] = state (field 3); utime = field 14, stime = field 15
    // cutime/cstime (fields 16, 17): CPU of children this process has waited for (the postmaster reaps its backends)
    return { comm, ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICK, children: (Number(fields[13]) + Number(fields[14])) / TICK };
  } catch {
    return null;
  }
}

export function supported(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}

/** Every process now, by pid, and the children of each (from /proc). */
export function processTree(): { procs: Map<number, { comm: string; ppid: number; cpu: number; children: number }>; children: Map<number, number[]> } {
  const procs = new Map<number, { comm: string; ppid: number; cpu: number; children: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(`/proc/${name}/stat`);
    if (s) procs.set(Number(name), s);
  }
  const children = new Map<number, number[]>();
  for (const [p, s] of procs) children.set(s.ppid, [...(children.get(s.ppid) ?? []), p]);
  return { procs, children };
}

/** One sample over the process tree rooted at `pid`. */
export function sampleCpu(pid: number): CpuSample {
  const sample: CpuSample = { at: Date.now(), jsThread: 0, otherThreads: 0, postgres: 0, other: 0 };
  if (!supported()) return sample;
  const { procs, children } = processTree();
  const main = stat(`/proc/${pid}/task/${pid}/stat`);
  const whole = procs.get(pid);
  if (whole && main) {
    sample.jsThread = main.cpu;
    sample.otherThreads = Math.max(0, whole.cpu - main.cpu);
  }
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length) {
    const p = stack.pop()!;
    const s = procs.get(p)!;
    const parent = procs.get(s.ppid);
    const postmaster = s.comm.startsWith('postgres') && !(parent && parent.comm.startsWith('postgres'));
    // Backends come and go (pooled connections close when idle): the postmaster's reaped-children time keeps theirs.
    if (s.comm.startsWith('postgres')) sample.postgres += s.cpu + (postmaster ? s.children : 0);
    else sample.other += s.cpu;
    stack.push(...(children.get(p) ?? []));
  }
  return sample;
}

export interface CpuBreakdown {
  wallS: number;
  jsThreadS: number;
  otherThreadsS: number;
  postgresS: number;
  /** CPU seconds per wall second, all parts together (2 cores = at most 2) */
  utilisation: number;
}

export function cpuBetween(a: CpuSample, b: CpuSample): CpuBreakdown {
  const wallS = (b.at - a.at) / 1000;
  const r = (x: number) => Math.round(x * 100) / 100;
  const js = b.jsThread - a.jsThread;
  const other = b.otherThreads - a.otherThreads;
  const pg = b.postgres - a.postgres;
  return { wallS: r(wallS), jsThreadS: r(js), otherThreadsS: r(other), postgresS: r(pg), utilisation: r((js + other + pg) / Math.max(wallS, 1e-9)) };
}
