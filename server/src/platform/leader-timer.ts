import type { FastifyBaseLogger } from 'fastify';
import { AdvisoryLease } from './db/advisory-lock.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * Runs `round(now)` every `everyMs` on the one node holding an advisory lease (schedulers);
 * overlapping rounds are skipped, a failed round is logged and the next one tries again.
 */
export class LeaderTimer implements Lifecycle {
  private readonly lease: AdvisoryLease;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    readonly name: string,
    private readonly o: {
      databaseUrl: string;
      lockKey: number;
      everyMs: number;
      clock: () => Date;
      log: FastifyBaseLogger;
      round: (now: Date) => Promise<unknown>;
    },
  ) {
    this.lease = new AdvisoryLease(o.databaseUrl, o.lockKey);
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.tick(), this.o.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.lease.release();
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = (async () => {
      try {
        if (await this.lease.acquire()) await this.o.round(this.o.clock());
      } catch (error) {
        this.o.log.warn({ err: error, part: this.name }, 'scheduled round failed');
      }
    })();
    await this.running;
    this.running = undefined;
  }
}
