import { api, ApiError } from '../../api/client';
import { LiveTwins, type LiveStateChange, type LiveStatus } from '../twins/live-twins';
import type { Twin, TwinState } from '../twins/twin-api';
import { applyChange, withNewerLive } from '../twins/live-merge';
import { consoleChartSource, type ChartSource } from '../charts/chart-source';

type ValueListener = (timestamp: string, value: unknown) => void;

/** What a dashboard reads its twins from and follows them on: the XAPI, or a public dashboard's key. */
export interface DashboardSource {
  /** The twins (null: gone or not visible) and their states, read now. */
  read(twinIds: string[]): Promise<{ twins: Record<string, Twin | null>; states: TwinState[] }>;
  /** The page's one live connection. */
  live: LiveTwins;
  /** Where line charts read their points (and their CSV, where the viewer may download). */
  chart: ChartSource;
}

/** The signed-in console: each twin and its states through the XAPI, live over `/xapi/v1/live`. */
export function consoleSource(): DashboardSource {
  const readTwin = async (id: string): Promise<[Twin | null, TwinState[]]> => {
    try {
      const [twin, states] = await Promise.all([
        api.call('GET /xapi/v1/digital-twins/{id}', { path: { id } }),
        api.call('GET /xapi/v1/digital-twins/{id}/states', { path: { id }, query: { pageSize: 500 } }),
      ]);
      return [twin, states.data];
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 404) return [null, []];
      throw failure;
    }
  };
  return {
    live: new LiveTwins(),
    chart: consoleChartSource,
    async read(twinIds) {
      const replies = await Promise.all(twinIds.map(readTwin));
      return {
        twins: Object.fromEntries(twinIds.map((id, i) => [id, replies[i]![0]])),
        states: replies.flatMap(([, states]) => states),
      };
    },
  };
}

/**
 * The twins and data states a dashboard shows, kept current over one live connection. Widgets read
 * `twins` and `states` (reactive), and charts register for every single change with `onValue`
 * (a batch may change one state twice; a chart wants both points).
 *
 * No stale values: the twins are re-read once their subscription is confirmed (at the start and
 * after every reconnect), a read's values give way to newer live changes that arrived before it
 * (`withNewerLive`), and of overlapping reads of a twin only the last one issued is applied.
 */
export class DashboardData {
  /** By twin id; null: the twin is gone or not visible to this user. */
  twins = $state<Record<string, Twin | null>>({});
  states = $state<Record<string, TwinState>>({});
  live = $state<LiveStatus>('connecting');
  error = $state<unknown>(null);
  private listeners = new Map<string, Set<ValueListener>>();
  private loading = new Set<string>();
  /** The number of the last read issued per twin: an older read answering late is dropped. */
  private reads = new Map<string, number>();
  private readCount = 0;
  /**
   * The newest live change per state, also for states not read yet: a read that was answered before
   * a change but arrives after it must not put the older value back on screen.
   */
  private latestLive = new Map<string, LiveStateChange>();

  constructor(readonly source: DashboardSource = consoleSource()) {}

  /** Reads the twins (and their states) not read yet; `force` reads them again (after a resync). */
  async load(twinIds: string[], force = false): Promise<void> {
    const wanted = twinIds.filter((id) => force || (!(id in this.twins) && !this.loading.has(id)));
    if (wanted.length === 0) return;
    const number = ++this.readCount;
    for (const id of wanted) {
      this.loading.add(id);
      this.reads.set(id, number);
    }
    try {
      const { twins, states } = await this.source.read(wanted);
      const current = new Set(wanted.filter((id) => this.reads.get(id) === number));
      for (const id of current) this.twins[id] = twins[id] ?? null;
      const fresh = states.filter((state) => current.has(state.twinId));
      for (const state of withNewerLive(fresh, this.latestLive)) this.states[state.id] = state;
      this.error = null;
    } catch (failure) {
      this.error = failure;
    } finally {
      for (const id of wanted) if (this.reads.get(id) === number) this.loading.delete(id);
    }
  }

  /** Follows the twins live until the returned function is called. */
  follow(twinIds: string[]): () => void {
    // Nothing to follow (yet): the status stays as it is, and the page shows no badge.
    if (twinIds.length === 0) return () => undefined;
    return this.source.live.follow(twinIds, {
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
