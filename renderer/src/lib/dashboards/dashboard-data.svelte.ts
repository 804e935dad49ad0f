import { api, ApiError } from '../../api/client';
import { followTwins, type LiveStateChange, type LiveStatus } from '../twins/live-twins';
import type { Twin, TwinState } from '../twins/twin-api';
import { applyChange, withNewerLive } from '../twins/live-merge';

type ValueListener = (timestamp: string, value: unknown) => void;

/**
 * The twins and data states a dashboard shows, kept current over the live WebSocket. Widgets read
 * `twins` and `states` (reactive), and charts register for every single change with `onValue`
 * (a batch may change one state twice; a chart wants both points).
 */
export class DashboardData {
  /** By twin id; null: the twin is gone or not visible to this user. */
  twins = $state<Record<string, Twin | null>>({});
  states = $state<Record<string, TwinState>>({});
  live = $state<LiveStatus>('connecting');
  error = $state<unknown>(null);
  private listeners = new Map<string, Set<ValueListener>>();
  private loading = new Set<string>();
  /**
   * The newest live change per state, also for states not read yet: a read that was answered before
   * a change but arrives after it must not put the older value back on screen.
   */
  private latestLive = new Map<string, LiveStateChange>();

  /** Reads the twins (and their states) not read yet; `force` reads them again (after a resync). */
  async load(twinIds: string[], force = false): Promise<void> {
    const wanted = twinIds.filter((id) => force || (!(id in this.twins) && !this.loading.has(id)));
    await Promise.all(wanted.map((id) => this.loadTwin(id)));
  }

  private async loadTwin(id: string): Promise<void> {
    this.loading.add(id);
    try {
      const [twin, states] = await Promise.all([
        api.call('GET /xapi/v1/digital-twins/{id}', { path: { id } }),
        api.call('GET /xapi/v1/digital-twins/{id}/states', { path: { id }, query: { pageSize: 500 } }),
      ]);
      this.twins[id] = twin;
      for (const state of withNewerLive(states.data, this.latestLive)) this.states[state.id] = state;
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 404) this.twins[id] = null;
      else this.error = failure;
    } finally {
      this.loading.delete(id);
    }
  }

  /** Follows the twins live until the returned function is called. */
  follow(twinIds: string[]): () => void {
    // Nothing to follow (yet): the status stays as it is, and the page shows no badge.
    if (twinIds.length === 0) return () => undefined;
    return followTwins(twinIds, {
      onStatus: (status) => (this.live = status),
      onResync: () => void this.load(twinIds, true),
      onStates: (changes) => {
        for (const change of changes) {
          this.latestLive.set(change.stateId, change);
          const state = this.states[change.stateId];
          if (state) applyChange(state, change);
          for (const listener of this.listeners.get(change.stateId) ?? [])
            listener(change.timestamp, change.value);
        }
      },
    });
  }

  onValue(stateId: string, listener: ValueListener): () => void {
    const set = this.listeners.get(stateId) ?? new Set();
    set.add(listener);
    this.listeners.set(stateId, set);
    return () => set.delete(listener);
  }
}

/** The state's y-axis settings (`meta.visual.yAxis`), which the gauge and donut use as their bounds. */
export function visualAxis(state: TwinState | undefined): {
  min: number | null;
  max: number | null;
  unit: string | null;
} {
  const axis = (
    state?.meta as
      { visual?: { yAxis?: { min?: unknown; max?: unknown; unit?: unknown } | null } } | undefined
  )?.visual?.yAxis;
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
  return {
    min: number(axis?.min),
    max: number(axis?.max),
    unit: typeof axis?.unit === 'string' && axis.unit ? axis.unit : null,
  };
}

/** Bounds of a gauge or donut: the widget's own, else the state's y-axis, else 0–100. */
export function boundsOf(
  widget: { min?: number | null; max?: number | null },
  state: TwinState | undefined,
): { min: number; max: number; unit: string } {
  const axis = visualAxis(state);
  const min = widget.min ?? axis.min ?? 0;
  let max = widget.max ?? axis.max ?? 100;
  if (max <= min) max = min + 1;
  return { min, max, unit: axis.unit ?? state?.unit ?? '' };
}
