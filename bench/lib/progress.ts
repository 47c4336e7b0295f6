import { MultiBar, Presets, type SingleBar } from 'cli-progress';

export interface Progress {
  bar(label: string, total: number): Bar;
  log(line: string): void;
  stop(): void;
}

export interface Bar {
  update(value: number): void;
  increment(by?: number): void;
  setTotal(total: number): void;
  stop(): void;
}

/**
 * Progress output: cli-progress bars on a terminal; elsewhere (CI, logs) one plain line per bar every few
 * seconds and at the end, so a long run still shows it is alive. `quiet` prints nothing (tests).
 */
export function createProgress(opts: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  if (opts.quiet) {
    const nop: Bar = { update() {}, increment() {}, setTotal() {}, stop() {} };
    return { bar: () => nop, log() {}, stop() {} };
  }
  if (stream.isTTY) {
    const multi = new MultiBar({ format: '{label} [{bar}] {value}/{total} {duration_formatted} (eta {eta_formatted})', hideCursor: true, clearOnComplete: false, stream }, Presets.shades_classic);
    return {
      bar(label, total) {
        const b: SingleBar = multi.create(Math.max(1, total), 0, { label: label.padEnd(34) });
        return { update: (v) => b.update(v), increment: (n = 1) => b.increment(n), setTotal: (t) => b.setTotal(Math.max(1, t)), stop: () => (b.stop(), multi.remove(b)) };
      },
      log: (line) => multi.log(`${line}\n`),
      stop: () => multi.stop(),
    };
  }
  return {
    bar(label, total) {
      let value = 0;
      let last = 0;
      const started = Date.now();
      const print = (force = false) => {
        if (!force && Date.now() - last < 5000) return;
        last = Date.now();
        stream.write(`${label}: ${value}/${total} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      };
      return {
        update: (v) => ((value = v), print()),
        increment: (n = 1) => ((value += n), print()),
        setTotal: (t) => (total = t),
        stop: () => print(true),
      };
    },
    log: (line) => stream.write(`${line}\n`),
    stop() {},
  };
}
