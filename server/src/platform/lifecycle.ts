import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnavailable } from './db/database-availability.js';

/** A long-running part of the server. */
export interface Lifecycle {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts parts in order; stops the started ones in reverse, each at most once. */
export class LifecycleRunner {
  private readonly started: Lifecycle[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: FastifyBaseLogger) {}

  async start(part: Lifecycle): Promise<void> {
    await part.start();
    this.started.push(part);
    this.log.debug({ part: part.name }, 'started');
  }

  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      for (const part of [...this.started].reverse()) {
        try {
          await part.stop();
          this.log.info({ part: part.name }, 'stopped');
        } catch (error) {
          // A part that records its stop in the database (the node heartbeat) finds it gone when
          // Ctrl-C stopped an embedded PostgreSQL with the server: worth a warning, not an error.
          if (isDatabaseUnavailable(error))
            this.log.warn({ err: error, part: part.name }, 'stopped without the database (already gone)');
          else this.log.error({ err: error, part: part.name }, 'failed to stop cleanly');
        }
      }
    })();
    return this.stopping;
  }
}
