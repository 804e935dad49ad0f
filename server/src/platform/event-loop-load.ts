import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * Whether this thread's event loop is saturated: its utilisation (time not idle, waiting for I/O)
 * was above `threshold` in each of the last `windows` windows. Sampled once per window, so asking
 * costs nothing. Used by the live view (ADR 0104) to leave work to the ingest worker while the
 * broker's thread has no CPU to spare. Two windows of half a second: a single GC pause or burst does
 * not count as overload. With one window, the broker's thread at 10,000 msg/s (about half a core on
 * average, single windows at 0.75–0.83 every few seconds) crossed 0.9 in some runs, and the live view
 * then declined half a second of packets, each shown about a second later, after its commit.
 */
export class EventLoopLoad {
  private last: EventLoopUtilization | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Consecutive windows above the threshold, up to now. */
  private saturatedWindows = 0;

  constructor(
    private readonly threshold = 0.9,
    private readonly windowMs = 500,
    private readonly windows = 2,
  ) {}

  get busy(): boolean {
    return this.saturatedWindows >= this.windows;
  }

  start(): void {
    this.last = performance.eventLoopUtilization();
    this.timer ??= setInterval(() => this.sample(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.saturatedWindows = 0;
  }

  private sample(): void {
    const now = performance.eventLoopUtilization();
    const saturated = performance.eventLoopUtilization(now, this.last).utilization > this.threshold;
    this.saturatedWindows = saturated ? this.saturatedWindows + 1 : 0;
    this.last = now;
  }
}
