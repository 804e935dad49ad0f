import { api } from '../../api/client';
import type { Reply } from '../../api/generated';
import { liveAlarms } from '../rules/live-alarms';

export type OverviewReply = Reply<'GET /xapi/v1/overview'>;

/** Counts that are not alarms (health, ingest, gateways) change without a push: read this often. */
export const POLL_MS = 30_000;

/**
 * The overview's data: one read of GET /xapi/v1/overview (its parts follow the user's permissions),
 * again when an alarm changes (the live socket, only while the reply has an alarm part) and every
 * POLL_MS while the page is visible; a hidden tab neither polls nor follows. Create it while the
 * page component initialises (it sets up effects).
 */
export class OverviewState {
  data = $state<OverviewReply | null>(null);
  error = $state<unknown>(null);
  loading = $state(false);
  private request = 0;

  constructor() {
    $effect(() => {
      let timer: ReturnType<typeof setInterval> | undefined;
      let pending: ReturnType<typeof setTimeout> | undefined;
      let unlisten: (() => void) | undefined;
      const follow = () => {
        if (unlisten || !this.data?.alarms) return;
        // A burst of changes (a bulk action, an ingest batch) costs one read, not one per entry.
        unlisten = liveAlarms.listen(() => {
          clearTimeout(pending);
          pending = setTimeout(() => void this.reload(), 300);
        });
      };
      const start = () => {
        void this.reload().then(follow);
        timer = setInterval(() => void this.reload(), POLL_MS);
      };
      const stop = () => {
        clearInterval(timer);
        clearTimeout(pending);
        unlisten?.();
        unlisten = undefined;
      };
      const onVisibility = () => {
        stop();
        if (document.visibilityState === 'visible') start();
      };
      if (document.visibilityState === 'visible') start();
      document.addEventListener('visibilitychange', onVisibility);
      return () => {
        document.removeEventListener('visibilitychange', onVisibility);
        stop();
      };
    });
  }

  async reload(): Promise<void> {
    const mine = ++this.request;
    this.loading = true;
    try {
      const reply = await api.call('GET /xapi/v1/overview');
      if (mine !== this.request) return;
      this.data = reply;
      this.error = null;
    } catch (failure) {
      if (mine === this.request) this.error = failure;
    } finally {
      if (mine === this.request) this.loading = false;
    }
  }
}
