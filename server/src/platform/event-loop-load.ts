import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * Whether this thread's event loop is saturated: its utilisation (time not idle, waiting for I/O)
 * over the last full window is above `threshold`. Sampled once per window, so asking costs nothing.
 * Used by the live view (ADR 0104) to leave work to the ingest worker while the broker's thread has
 * no CPU to spare; a window of half a second keeps a single GC pause from counting as overload.
 */
export class EventLoopLoad {
  private last: EventLoopUtilization | undefined;
  private timer: NodeJS.Timeout | undefined;
  private saturated = false;

  constructor(
    private readonly threshold = 0.9,
    private readonly windowMs = 500,
  ) {}

  get busy(): boolean {
    return this.saturated;
  }

  start(): void {
    this.last = performance.eventLoopUtilization();
    this.timer ??= setInterval(() => this.sample(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.saturated = false;
  }

  private sample(): void {
    const now = performance.eventLoopUtilization();
    this.saturated = performance.eventLoopUtilization(now, this.last).utilization > this.threshold;
    this.last = now;
  }
}
