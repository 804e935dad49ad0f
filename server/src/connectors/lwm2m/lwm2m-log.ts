import type { LinkContext } from '../links/link.types.js';

/**
 * Log entries clients cause, per minute at most: anyone who reaches the port can send datagrams,
 * and each entry is a database write.
 */
export const MAX_LOG_PER_MINUTE = 30;

/** The connector log of an LwM2M server, within MAX_LOG_PER_MINUTE; what is left out is counted. */
export class ClientLog {
  private window = { start: 0, count: 0, left: 0 };

  constructor(private readonly log: LinkContext['log']) {}

  write(level: 'info' | 'warn', message: string, details?: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.window.start >= 60_000) {
      if (this.window.left > 0)
        this.log(
          'warn',
          `${this.window.left} more entries about LwM2M clients were left out in the last minute`,
        );
      this.window = { start: now, count: 0, left: 0 };
    }
    if (this.window.count >= MAX_LOG_PER_MINUTE) {
      this.window.left += 1;
      return;
    }
    this.window.count += 1;
    this.log(level, message, details);
  }
}
