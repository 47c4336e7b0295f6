/** Wall time and work units per named step since start (exposed on /metrics; the speed benchmark reads it). */
export class StepClock {
  private readonly steps = new Map<string, { seconds: number; items: number }>();

  /** Times fn as `step`, counting `items` units of work for it (whether fn succeeds or throws). */
  async timed<T>(step: string, items: number, fn: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    try {
      return await fn();
    } finally {
      this.add(step, items, started);
    }
  }

  /** Adds the time since `started` (process.hrtime.bigint()) to `step`. */
  add(step: string, items: number, started: bigint): void {
    const t = this.steps.get(step) ?? { seconds: 0, items: 0 };
    t.seconds += Number(process.hrtime.bigint() - started) / 1e9;
    t.items += items;
    this.steps.set(step, t);
  }

  times(): ReadonlyMap<string, { seconds: number; items: number }> {
    return this.steps;
  }
}
