import { api } from '../../api/client';

/**
 * The number of open alarm entries for the navigation badge: read when the console starts, every
 * minute, and after the alarms page changed an entry. Null while unknown or not permitted.
 */
class OpenAlarms {
  count = $state<number | null>(null);
  private timer: ReturnType<typeof setInterval> | undefined;

  async refresh(): Promise<void> {
    try {
      const reply = await api.call('GET /xapi/v1/alarm-logs', { query: { status: 'open', pageSize: 1 } });
      this.count = reply.meta.total;
    } catch {
      // No alarmLog.read, or offline: no badge rather than an error in the navigation.
      this.count = null;
    }
  }

  /** Starts polling (idempotent); the navigation calls it once it is shown. */
  start(): void {
    if (this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), 60_000);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.count = null;
  }
}

export const openAlarms = new OpenAlarms();
