/**
 * Claims work and runs up to `concurrency` jobs at once: claim as many as there are free slots, start them, and
 * when nothing is claimable sleep until `pollMs` passes or `wake()` is called. Claims are the caller's (a lease
 * in Postgres), so several processes can run the same loop safely.
 */
export interface ClaimLoopOptions<J> {
  concurrency: number;
  pollMs: number;
  claim(n: number): Promise<J[]>;
  work(job: J): Promise<void>;
  onError(err: unknown, phase: 'claim' | 'work', job?: J): void;
}

export class ClaimLoop<J> {
  private stopped = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private readonly active = new Set<Promise<void>>();

  constructor(private readonly options: ClaimLoopOptions<J>) {}

  get running(): number {
    return this.active.size;
  }

  start(): void {
    this.stopped = false;
    this.loop ??= this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  /** Stops claiming and waits for the jobs in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
    await Promise.allSettled([...this.active]);
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const free = this.options.concurrency - this.active.size;
        const jobs = free > 0 ? await this.options.claim(free) : [];
        for (const job of jobs) {
          const p = this.options
            .work(job)
            .catch((err) => this.options.onError(err, 'work', job))
            .finally(() => {
              this.active.delete(p);
              this.wakeUp?.();
            });
          this.active.add(p);
        }
        if (jobs.length === free && free > 0) continue;
      } catch (err) {
        if (this.stopped) break;
        this.options.onError(err, 'claim');
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.options.pollMs);
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }
}
