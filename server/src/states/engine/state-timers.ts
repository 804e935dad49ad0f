import type { FastifyBaseLogger } from 'fastify';
import { AdvisoryLease } from '../../platform/db/advisory-lock.js';
import type { Lifecycle } from '../../platform/lifecycle.js';
import type { SourceComputations } from '../sources/state-source-kind.js';
import { nextPeriodStart } from './calendar.js';
import type { StateEngine } from './state-engine.js';
import type { WindowFigures } from './state-store.js';
import type { StateChange, StateEvent } from './state-work.js';
import { basePeriod } from './time-aggregation.js';
import { tidy } from './state-values.js';

/**
 * States that change with time rather than with data, on one node at a time (an advisory lease),
 * selected by their source descriptor's `compute` (sources/state-source-kind.ts):
 * - `period`: when a period ends without new data the value still moves on (count 0,
 *   previous-* periods take the completed one), at the first tick after the period's end;
 * - `draw`: a new value every `intervalSeconds`;
 * - `window`: recomputed every `intervalSeconds` from `ts_points` over the window
 *   [now − windowSeconds, now) (the PostgreSQL target; points arrive there through the outbox, so the
 *   window trails the newest values by the writer's delay).
 *
 * Failure behaviour: a failed tick is logged and retried at the next tick (what was due stays due).
 * After a restart or a change of leader everything is due once: periods that ended meanwhile roll
 * over then, with the period's start as their time. Due times live in memory of the leader.
 */

export const STATE_TIMERS_LOCK = 0x5354_4154; // "STAT"

export interface StateTimersOptions {
  engine: StateEngine;
  databaseUrl: string;
  clock: () => Date;
  log: FastifyBaseLogger;
  tickMs?: number;
}

/** Default digits of random values when the source does not say. */
const RANDOM_DECIMALS = 2;

export class StateTimers implements Lifecycle {
  readonly name = 'state-timers';
  private readonly lease: AdvisoryLease;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly due = new Map<string, number>();

  constructor(private readonly options: StateTimersOptions) {
    this.lease = new AdvisoryLease(options.databaseUrl, STATE_TIMERS_LOCK);
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.tick(), this.options.tickMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.lease.release();
  }

  /** One timer round when this node leads; overlapping rounds are skipped. */
  async tick(): Promise<void> {
    if (this.running) return;
    this.running = (async () => {
      try {
        if (await this.lease.acquire()) await this.runDue(this.options.clock());
      } catch (error) {
        this.options.log.warn({ err: error }, 'state timers: round failed, retrying at the next tick');
      } finally {
        this.running = undefined;
      }
    })();
    await this.running;
  }

  /** Applies everything due at `now` in one transaction (tests call it directly, without the lease). */
  async runDue(now: Date): Promise<StateChange[]> {
    const index = await this.options.engine.routing();
    const at = now.getTime();
    const isDue = (id: string) => (this.due.get(id) ?? -Infinity) <= at;
    const nextDue = new Map<string, number>();
    const events: StateEvent[] = [];
    // Period rollovers first: values arriving with the same tick then count in the new period.
    for (const d of index.computedBy('period')) {
      if (!isDue(d.id)) continue;
      events.push({ stateId: d.id, kind: 'tick', time: now });
      nextDue.set(d.id, nextPeriodStart(basePeriod(d.source.period), at, d.timeZone));
    }
    for (const d of index.computedBy('draw')) {
      if (!isDue(d.id)) continue;
      events.push({ stateId: d.id, kind: 'set', value: drawRandom(d.source), time: now });
      nextDue.set(d.id, at + intervalMs(d.source.intervalSeconds));
    }
    const windows = index.computedBy('window').filter((d) => isDue(d.id));
    if (windows.length > 0) {
      const figures = await this.options.engine.windowFigures(
        windows.map((d) => ({
          id: d.id,
          source: d.source.stateId,
          since: new Date(at - Math.max(0, d.source.windowSeconds) * 1000),
        })),
        now,
      );
      for (const d of windows) {
        const f = figures.get(d.id);
        if (f) events.push({ stateId: d.id, kind: 'set', value: windowResult(d.source, f), time: now });
        nextDue.set(d.id, at + intervalMs(d.source.intervalSeconds));
      }
    }
    const changes = await this.options.engine.applyEvents(events);
    for (const [id, next] of nextDue) this.due.set(id, next);
    for (const id of this.due.keys()) if (!index.byId.has(id)) this.due.delete(id);
    return changes;
  }
}

const intervalMs = (seconds: number) => Math.max(1, Number.isFinite(seconds) ? seconds : 60) * 1000;

export function drawRandom(source: SourceComputations['draw']): number {
  const lo = Math.min(source.min, source.max);
  const hi = Math.max(source.min, source.max);
  const digits = Math.max(0, Math.min(10, Math.trunc(source.decimals ?? RANDOM_DECIMALS)));
  const factor = 10 ** digits;
  // Rounded inside [lo, hi]: a bound with more digits than asked for is not exceeded.
  const drawn = Math.round((lo + Math.random() * (hi - lo)) * factor) / factor;
  return Math.min(hi, Math.max(lo, drawn));
}

export function windowResult(source: SourceComputations['window'], f: WindowFigures): number | null {
  switch (source.operation) {
    case 'count':
      return f.count;
    case 'sum':
      return tidy(f.sum ?? 0);
    case 'mean':
      return tidy(f.mean);
    case 'min':
      return f.min;
    case 'max':
      return f.max;
  }
}
