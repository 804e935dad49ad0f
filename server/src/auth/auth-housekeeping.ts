import { RequestContext, type MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { LoginThrottleService } from './login-throttle.service.js';
import type { SessionService } from './session.service.js';

const EVERY_MS = 60 * 60 * 1000;

/**
 * Hourly cleanup of dead sessions and stale login counters, so neither table grows with every
 * login or every guessed e-mail. Every node runs it; the deletes are idempotent.
 */
export class AuthHousekeeping implements Lifecycle {
  readonly name = 'auth-housekeeping';
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly log: FastifyBaseLogger,
    private readonly sessions: SessionService,
    private readonly throttle: LoginThrottleService,
    private readonly everyMs = EVERY_MS,
  ) {}

  async start(): Promise<void> {
    await this.run();
    this.timer = setInterval(() => void this.run(), this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }

  /** One pass; failures are logged, never thrown (the next pass retries). */
  run(): Promise<void> {
    this.inFlight ??= RequestContext.create(this.orm.em.fork(), async () => {
      const removed = await this.sessions.purgeExpired();
      await this.throttle.purgeStale();
      if (removed > 0) this.log.debug({ removed }, 'purged dead sessions');
    })
      .catch((error: unknown) => this.log.warn({ err: error }, 'auth housekeeping failed'))
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}
