import { api } from '../../api/client';
import { liveAlarms } from './live-alarms';

/**
 * The number of open alarm entries for the navigation badge: read when the console starts and
 * again whenever the live socket reports an alarm change (or reconnects), never by polling. Null
 * while unknown or not permitted.
 */
class OpenAlarms {
  count = $state<number | null>(null);
  private unlisten: (() => void) | undefined;
  private pending: ReturnType<typeof setTimeout> | undefined;
  private started = false;

  async refresh(): Promise<void> {
    try {
      const reply = await api.call('GET /xapi/v1/alarm-logs', { query: { status: 'open', pageSize: 1 } });
      this.count = reply.meta.total;
    } catch {
      // No alarmLog.read, or offline: no badge rather than an error in the navigation.
      this.count = null;
    }
  }

  /** Starts following (idempotent); the navigation calls it once it is shown. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.refresh().then(() => {
      // Without alarmLog.read there is nothing to follow (and the socket would be refused).
      if (!this.started || this.count === null || this.unlisten) return;
      // A burst of changes (a bulk action, an ingest batch) costs one count, not one per entry.
      this.unlisten = liveAlarms.listen(() => {
        clearTimeout(this.pending);
        this.pending = setTimeout(() => void this.refresh(), 150);
      });
    });
  }

  stop(): void {
    this.started = false;
    this.unlisten?.();
    this.unlisten = undefined;
    clearTimeout(this.pending);
    this.count = null;
  }
}

export const openAlarms = new OpenAlarms();
