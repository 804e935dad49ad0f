import type { TimeSeriesPoint } from '../../timeseries/timeseries.types.js';
import { aggregateOf, differenceOf, pushRecent } from './aggregate.js';
import type { IndexedDefinition, RoutingIndex, StateDefinition } from './routing-index.js';
import { pointValue, sameValue, valueWarning } from './state-values.js';
import { readAccumulator, rollTo, startAccumulator, addValue, stateResult } from './time-aggregation.js';

/**
 * One unit of state engine work over rows locked in one transaction (pure apart from the rows it is
 * given): events are applied in order, each followed by its dependents in topological order, and
 * every value change is recorded (a point and a listener notice each).
 *
 * Event semantics:
 * - `receive`, a value a device sent: the state's value changes only when it differs, but every
 *   received value counts for dependents (a time-aggregated count counts repeats; a difference of a
 *   repeated value is 0). Replays are harmless: a value from a packet at or below the one the state
 *   (or an accumulating dependent) already took, or older than the state's timestamp, is skipped.
 * - `set`, a value from the API, a rule or a timer: nothing happens when it equals the current one.
 * - `tick`, time passing for a state computed over a calendar period: its period rolls over when
 *   it ended.
 * Derived states fire their dependents only when their value changes. Which computation a state
 * takes is its source descriptor's `compute` (sources/state-source-kind.ts), read from the routing
 * index's definition; the computations themselves live here and in the timers.
 */

export interface StateRow {
  id: string;
  value: unknown;
  timestamp: Date | null;
  warning: string | null;
  engine: Record<string, unknown>;
}

/** Order of a received value: [packet id, index of the update within the packet]. */
export type PacketSeq = readonly [bigint, number];

export interface StateEvent {
  stateId: string;
  kind: 'receive' | 'set' | 'tick';
  value?: unknown;
  time: Date;
  seq?: PacketSeq;
  /** `set` only: skipped when the state already holds a value of `time` or later. */
  unlessNewer?: boolean;
  /**
   * `receive` only: consoles were shown this value on arrival (the live view, ADR 0135), so the
   * change it makes is marked `shownLive` and not pushed to them again.
   */
  shownLive?: boolean;
}

/** A value change of a twin state, as listeners receive it (after the commit). */
export interface StateChange {
  stateId: string;
  twinId: string;
  accountId: string;
  key: string;
  value: unknown;
  timestamp: Date;
  warning: string | null;
  /** Pushed to consoles on the packet's arrival already (the live hub skips it); absent otherwise. */
  shownLive?: true;
}

type Fired = Map<string, unknown>;

function storedSeq(engine: Record<string, unknown>): PacketSeq | null {
  const p = engine.packet;
  if (!Array.isArray(p) || typeof p[0] !== 'string' || typeof p[1] !== 'number') return null;
  try {
    return [BigInt(p[0]), p[1]];
  } catch {
    return null;
  }
}

/** True when `seq` comes after what the state already took (or carries no packet order). */
function isNew(seq: PacketSeq | undefined, engine: Record<string, unknown>): boolean {
  if (!seq) return true;
  const stored = storedSeq(engine);
  return !stored || seq[0] > stored[0] || (seq[0] === stored[0] && seq[1] > stored[1]);
}

const withSeq = (engine: Record<string, unknown>, seq: PacketSeq | undefined) =>
  seq ? { ...engine, packet: [seq[0].toString(), seq[1]] } : engine;

export class StateWork {
  readonly changes: StateChange[] = [];
  private readonly dirty = new Set<string>();

  constructor(
    private readonly index: RoutingIndex,
    private readonly rows: Map<string, StateRow>,
  ) {}

  has(stateId: string): boolean {
    return this.rows.has(stateId) && this.index.byId.has(stateId);
  }

  /** Applies one event and what follows from it; true when the event's own state changed value. */
  apply(event: StateEvent): boolean {
    return this.applyTogether([event])[0]!;
  }

  /**
   * Applies events that happened together (the keys of one device update: same packet, index and
   * time) to their own states first, then recomputes the dependents once. So a sum of two of them
   * takes one value, never one in between that no device ever reported (it would be a point of its
   * own at the same time, kept by PostgreSQL but overwritten in InfluxDB, and counted by time
   * aggregates). Returns, per event, whether its own state changed value.
   */
  applyTogether(events: StateEvent[]): boolean[] {
    const fired: Fired = new Map();
    const results = events.map((event) => this.take(event, fired));
    if (fired.size > 0) this.propagate([...fired.keys()], fired, events[0]!);
    return results;
  }

  /** The event's own state: its value, and whether it fires its dependents (into `fired`). */
  private take(event: StateEvent, fired: Fired): boolean {
    const def = this.index.byId.get(event.stateId);
    const row = this.rows.get(event.stateId);
    if (!def || !row) return false;
    if (event.kind === 'receive') {
      if (!isNew(event.seq, row.engine) || (row.timestamp && event.time < row.timestamp)) return false;
      row.engine = withSeq(row.engine, event.seq);
      fired.set(def.id, event.value ?? null);
      return this.setValue(def, row, event.value ?? null, event.time, event.shownLive);
    }
    if (event.unlessNewer && row.timestamp && row.timestamp >= event.time) return false;
    const changed =
      event.kind === 'set'
        ? this.setValue(def, row, event.value ?? null, event.time)
        : this.tick(def, row, event.time);
    if (changed) fired.set(def.id, row.value);
    return changed;
  }

  dirtyRows(): StateRow[] {
    return [...this.dirty].map((id) => this.rows.get(id)!);
  }

  points(): TimeSeriesPoint[] {
    return this.changes.map((c) => ({
      accountId: c.accountId,
      twinId: c.twinId,
      stateId: c.stateId,
      stateKey: c.key,
      time: c.timestamp,
      ...pointValue(c.value),
    }));
  }

  private propagate(origins: string[], fired: Fired, event: StateEvent): void {
    for (const id of this.index.downstreamOfAll(origins)) {
      const def = this.index.byId.get(id)!;
      const row = this.rows.get(id);
      if (!row) continue;
      const sources = this.index.sourcesOf(def);
      if (!sources.some((s) => fired.has(s))) continue;
      if (this.derive(def, row, sources, fired, event)) fired.set(id, row.value);
    }
  }

  /** Recomputes a dependent state; true when its value changed. */
  private derive(
    def: IndexedDefinition,
    row: StateRow,
    sources: string[],
    fired: Fired,
    event: StateEvent,
  ): boolean {
    if (def.compute === 'states') {
      const s = def.source;
      if (s.operation !== 'difference') {
        const values = s.stateIds.map((id) => this.rows.get(id)?.value ?? null);
        return this.setValue(def, row, aggregateOf(s.operation, values), event.time);
      }
      const from = sources[0]!;
      if (!fired.has(from) || !isNew(event.seq, row.engine)) return false;
      const recent = pushRecent(row.engine.recent, fired.get(from));
      this.setEngine(row, { ...withSeq(row.engine, event.seq), recent });
      return this.setValue(def, row, differenceOf(recent), event.time);
    }
    if (def.compute === 'period') {
      const s = def.source;
      if (!isNew(event.seq, row.engine)) return false;
      const at = event.time.getTime();
      const before = readAccumulator(row.engine.period);
      const acc = rollTo(
        before ?? startAccumulator(s.period, at, def.timeZone),
        at,
        s.period,
        s.operation,
        def.timeZone,
      );
      const counted = addValue(acc, fired.get(s.stateId), at);
      if (!counted && acc === before) return false;
      this.setEngine(row, { ...withSeq(row.engine, event.seq), period: acc });
      // A previous-* state changes when its period completed, not when the next value came.
      const when =
        s.period.startsWith('previous-') && acc !== before && before ? new Date(acc.start) : event.time;
      return this.setValue(def, row, stateResult(acc, s.operation, s.period), when);
    }
    // A window is recomputed by the timers from stored points, not per value.
    return false;
  }

  /** Time passed for a state computed over a calendar period: roll its period over when it ended. */
  private tick(def: IndexedDefinition, row: StateRow, time: Date): boolean {
    if (def.compute !== 'period') return false;
    const s = def.source;
    const at = time.getTime();
    const before = readAccumulator(row.engine.period);
    const acc = before
      ? rollTo(before, at, s.period, s.operation, def.timeZone)
      : startAccumulator(s.period, at, def.timeZone);
    if (acc !== before) this.setEngine(row, { ...row.engine, period: acc });
    // A rollover happened at the new period's start; otherwise (first accumulator, repair) now.
    const when = before && acc !== before ? new Date(acc.start) : time;
    return this.setValue(def, row, stateResult(acc, s.operation, s.period), when);
  }

  private setEngine(row: StateRow, engine: Record<string, unknown>): void {
    row.engine = engine;
    this.dirty.add(row.id);
  }

  private setValue(
    def: StateDefinition,
    row: StateRow,
    value: unknown,
    time: Date,
    shownLive?: boolean,
  ): boolean {
    if (sameValue(row.value, value)) return false;
    row.value = value;
    row.timestamp = time;
    row.warning = valueWarning(value, def.valueType);
    this.dirty.add(row.id);
    this.changes.push({
      stateId: def.id,
      twinId: def.twinId,
      accountId: def.accountId,
      key: def.key,
      value,
      timestamp: time,
      warning: row.warning,
      ...(shownLive ? { shownLive: true as const } : {}),
    });
    return true;
  }
}
