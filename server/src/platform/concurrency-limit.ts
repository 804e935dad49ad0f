/**
 * Runs at most `concurrency` tasks at once; the rest wait their turn in arrival order. For work that
 * draws on a shared pool (PostgreSQL connections), so one flood of callers cannot hold every slot.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly concurrency: number) {}

  /** Tasks started or waiting now. */
  get pending(): number {
    return this.running + this.waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` never drops below the queue's need.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
