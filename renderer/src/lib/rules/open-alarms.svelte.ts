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
    if (this.unlisten) return;
    void this.refresh();
    // A burst of changes (a bulk action, an ingest batch) costs one count, not one per entry.
    this.unlisten = liveAlarms.listen(() => {
      clearTimeout(this.pending);
      this.pending = setTimeout(() => void this.refresh(), 150);
    });
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = undefined;
    clearTimeout(this.pending);
    this.count = null;
  }
}

export const openAlarms = new OpenAlarms();
