import type { Logger } from 'pino';

export interface RestartSupervisorOptions {
  /** What is supervised, for the log lines. */
  name: string;
  /** Starts it again; resolves once it serves, rejects when this attempt failed. */
  restart: () => Promise<void>;
  /** Attempts since it last ran for `stableAfterMs`; beyond them `onGiveUp` is called. 0: at once. */
  maxAttempts: number;
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'fatal'>;
  /** Wait before attempt n (the last value repeats). */
  delaysMs?: readonly number[];
  /** Running this long counts as recovered: the next exit starts counting attempts from 1 again. */
  stableAfterMs?: number;
  /** It came back after an exit. */
  onRecovered?: (downMs: number) => void;
  /** Every allowed attempt failed (or crashed again soon after): the owner ends the process. */
  onGiveUp: (error: Error) => void;
}

// The first wait lets the dead postmaster's backends notice and detach from its shared memory.
const DEFAULT_DELAYS_MS = [250, 1000, 2000, 5000, 10_000, 20_000, 30_000];
const DEFAULT_STABLE_AFTER_MS = 60_000;

/**
 * Restarts a child service (the embedded PostgreSQL) that exited without being asked to, with a
 * growing wait between attempts. A service that keeps failing, or keeps crashing soon after each
 * restart, is given up after `maxAttempts`: the process then exits non-zero and the service manager
 * (systemd `Restart=`) takes over, which also clears whatever state this process could not.
 */
export class RestartSupervisor {
  private attempts = 0;
  private runningSince = Date.now();
  private recovering: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(private readonly options: RestartSupervisorOptions) {}

  /** It (re)started: attempts are forgotten once it has run for `stableAfterMs`. */
  started(): void {
    this.runningSince = Date.now();
  }

  /** It exited without a stop: restart it (once at a time). */
  exited(detail: Record<string, unknown>): void {
    if (this.stopped || this.recovering) return;
    const { options } = this;
    const downAt = Date.now();
    if (downAt - this.runningSince >= (options.stableAfterMs ?? DEFAULT_STABLE_AFTER_MS)) this.attempts = 0;
    options.log.error({ ...detail, restartsSoFar: this.attempts }, `${options.name} exited unexpectedly`);
    this.recovering = this.recover(downAt).finally(() => (this.recovering = undefined));
  }

  /** No more restarts; waits for an attempt in flight to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.recovering;
  }

  private async recover(downAt: number): Promise<void> {
    const { options } = this;
    const delays = options.delaysMs ?? DEFAULT_DELAYS_MS;
    let lastError: Error = new Error(`${options.name} exited`);
    while (!this.stopped) {
      if (this.attempts >= options.maxAttempts) {
        options.log.fatal(
          { attempts: this.attempts, err: lastError },
          `${options.name} could not be kept running; giving up`,
        );
        return options.onGiveUp(lastError);
      }
      const attempt = ++this.attempts;
      const delayMs = delays[Math.min(attempt - 1, delays.length - 1)] ?? 0;
      options.log.warn({ attempt, maxAttempts: options.maxAttempts, delayMs }, `restarting ${options.name}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        this.wake = () => (clearTimeout(timer), resolve());
      });
      this.wake = undefined;
      if (this.stopped) return;
      try {
        await options.restart();
        this.started();
        const downMs = Date.now() - downAt;
        options.log.info({ attempt, downMs }, `${options.name} restarted`);
        options.onRecovered?.(downMs);
        return;
      } catch (error) {
        lastError = error instanceof Error ? error : new Error(String(error));
        options.log.error({ attempt, err: lastError }, `${options.name} restart failed`);
      }
    }
  }
}
