import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { PacketOutcome } from '../../ingest/parse-packet.stage.js';
import { errors } from '../../platform/errors.js';
import type { Lifecycle } from '../../platform/lifecycle.js';
import { pgPoolUsage, trackPool, type PoolUsage } from '../../platform/db/pool-metrics.js';
import type { Metrics } from '../../platform/metrics.js';
import type { PointClient, PointSink } from '../../timeseries/timeseries.types.js';
import type { SetValueOptions, StateValueSetter } from '../state-value-setter.js';
import { RoutingIndex } from './routing-index.js';
import {
  loadDefinitions,
  lockRows,
  windowFigures,
  writeRows,
  type Queryable,
  type WindowFigures,
} from './state-store.js';
import { StateWork, type StateChange, type StateEvent } from './state-work.js';

/**
 * The state engine (ADR 0100): device states → twin data states → dependent states → time-series
 * points, in the transaction that also commits the device states and the ingest cursor.
 *
 * Per ingest batch: nothing at all when no state is routed from it (in-memory index lookups only);
 * otherwise three statements: lock the touched rows (`SELECT … FOR UPDATE`, one per batch), write
 * the changed rows (one `unnest` UPDATE), store the points (point-sink.ts: `ts_points` rows, and one
 * `ts_outbox` row when external targets are configured).
 *
 * Failure behaviour:
 * - A failing statement fails the batch transaction: the pipeline retries it or splits it (ADR 0090);
 *   nothing of the engine's work is committed without the cursor, and nothing twice (replays are
 *   skipped by packet order, see state-work.ts).
 * - Listeners run after the commit; one that throws is logged and ignored.
 * - Definitions: this node reloads its index before its next use after `definitionsChanged`; other
 *   nodes reload every `reloadIntervalMs` (default 15 s), so a definition changed on another node
 *   takes effect there at most that much later.
 */

export type StateChangeListener = (changes: StateChange[]) => void;

export interface StateEngineOptions {
  databaseUrl: string;
  points: PointSink;
  log: FastifyBaseLogger;
  metrics?: Metrics;
  reloadIntervalMs?: number;
}

export class StateEngine implements StateValueSetter, Lifecycle {
  readonly name = 'state-engine';
  private pool: pg.Pool | undefined;
  private index: RoutingIndex | undefined;
  private version = 0;
  private loadedVersion = -1;
  private loading: { version: number; done: Promise<RoutingIndex> } | undefined;
  private readonly listeners: StateChangeListener[] = [];
  private readonly definitionListeners: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly changesCounter;

  constructor(private readonly options: StateEngineOptions) {
    this.changesCounter = options.metrics?.counter(
      'stellwerk_state_changes_total',
      'Twin data state value changes written by the state engine',
    );
    if (options.metrics) trackPool(options.metrics, 'state-engine', () => this.poolUsage());
  }

  /** Its pool, opened at the first query (the ingest worker's engine reports it in its own registry). */
  poolUsage(): PoolUsage {
    return this.pool ? pgPoolUsage(this.pool)() : { inUse: 0, idle: 0, waiting: 0, max: 0 };
  }

  /** Called after each commit with the value changes it made, in order. */
  onStateChanges(listener: StateChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Changes committed by another engine instance of this node (the ingest worker's, ADR 0102):
   * counted and handed to this engine's listeners as if made here.
   */
  publishChanges(changes: StateChange[]): void {
    this.notify(changes);
  }

  /** Called after every `definitionsChanged` (the ingest worker's engine reloads too). */
  onDefinitionsChanged(listener: () => void): void {
    this.definitionListeners.push(listener);
  }

  /** See StateValueSetter: the whole index is reloaded before its next use on this node. */
  definitionsChanged(_twinId?: string): void {
    this.version++;
    for (const listener of this.definitionListeners) listener();
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.refresh(), this.options.reloadIntervalMs ?? 15_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  /** The current index, loaded (once, shared by concurrent callers) when definitions changed. */
  async routing(): Promise<RoutingIndex> {
    if (this.index && this.loadedVersion === this.version) return this.index;
    if (this.loading?.version !== this.version) {
      const version = this.version;
      const done = loadDefinitions(this.db()).then((defs) => {
        const index = new RoutingIndex(defs);
        if (index.unranked.length > 0)
          this.options.log.warn(
            { stateIds: index.unranked.slice(0, 20) },
            'state engine: states on a dependency cycle are not recomputed',
          );
        // A newer change while loading keeps the index stale: the next call loads again.
        if (version >= this.loadedVersion) [this.index, this.loadedVersion] = [index, version];
        return index;
      });
      this.loading = { version, done };
      done.catch(() => undefined).finally(() => this.loading?.done === done && (this.loading = undefined));
    }
    return this.loading.done;
  }

  /**
   * The index as loaded now, without waiting (the live view on the broker's thread): when definitions
   * changed, a reload starts and the index loaded before answers meanwhile; undefined before the
   * first load. A failed reload is logged and tried again at the next call.
   */
  loadedRouting(): RoutingIndex | undefined {
    if (this.loadedVersion !== this.version && this.loading?.version !== this.version)
      this.routing().catch((error: unknown) =>
        this.options.log.warn({ err: error }, 'state engine: loading definitions failed'),
      );
    return this.index;
  }

  /**
   * The ingest pipeline's commit hook: inside the batch transaction, turns the batch's device state
   * updates into twin state changes and points; returns the listener call for after the commit.
   * `shownLive`: whether consoles saw a packet's updates on arrival, twin states included (ADR 0135):
   * the changes its values make directly are then marked `shownLive`.
   */
  readonly inBatch = async (
    client: Queryable & PointClient,
    outcomes: PacketOutcome[],
    shownLive: (outcome: PacketOutcome) => boolean = () => false,
  ): Promise<(() => void) | undefined> => {
    const index = await this.routing();
    if (index.routedCount === 0) return undefined;
    const events: StateEvent[] = [];
    for (const o of outcomes) {
      if (!o.device || o.updates.length === 0) continue;
      const device = {
        deviceId: o.device.id,
        accountId: o.device.accountId,
        referenceId: o.device.referenceId,
      };
      const shown = shownLive(o);
      o.updates.forEach((u, i) =>
        index.forEachRouted(device, u.states, (stateId, value) =>
          events.push({
            stateId,
            kind: 'receive',
            value,
            time: u.receivedAt,
            seq: [u.packetId, i],
            ...(shown ? { shownLive: true } : {}),
          }),
        ),
      );
    }
    if (events.length === 0) return undefined;
    const work = await this.run(client, index, events);
    return () => this.notify(work.changes);
  };

  /** StateValueSetter: the caller has authorized the write. */
  async setValue(
    stateId: string,
    value: unknown,
    time: Date,
    options: SetValueOptions = {},
  ): Promise<{ changed: boolean }> {
    let index = await this.routing();
    if (!index.byId.has(stateId)) {
      // Created a moment ago (maybe on another node): look once more before refusing.
      this.definitionsChanged();
      index = await this.routing();
      if (!index.byId.has(stateId)) throw errors.notFound('State', stateId);
    }
    const work = await this.transaction(
      index,
      [{ stateId, kind: 'set', value, time, unlessNewer: options.unlessNewer }],
      (w) => {
        if (!w.has(stateId)) throw errors.notFound('State', stateId);
      },
    );
    return { changed: work.changes.some((c) => c.stateId === stateId) };
  }

  /** Events from timers (random values, window aggregates, period rollovers) in one transaction. */
  async applyEvents(events: StateEvent[]): Promise<StateChange[]> {
    if (events.length === 0) return [];
    return (await this.transaction(await this.routing(), events)).changes;
  }

  /** Figures of stored points per window (timeseries-aggregate sources), read on the engine's pool. */
  windowFigures(
    windows: Array<{ id: string; source: string; since: Date }>,
    until: Date,
  ): Promise<Map<string, WindowFigures>> {
    return windowFigures(this.db(), windows, until);
  }

  /** Locks, computes, writes and appends points on `db` (inside a transaction the caller owns). */
  private async run(
    db: Queryable & PointClient,
    index: RoutingIndex,
    events: StateEvent[],
    check?: (work: StateWork) => void,
  ): Promise<StateWork> {
    const rows = await lockRows(db, index.closure(new Set(events.map((e) => e.stateId))));
    const work = new StateWork(index, rows);
    check?.(work);
    for (const group of togetherGroups(events)) work.applyTogether(group);
    await writeRows(db, work.dirtyRows());
    await this.options.points.append(db, work.points());
    return work;
  }

  private async transaction(
    index: RoutingIndex,
    events: StateEvent[],
    check?: (work: StateWork) => void,
  ): Promise<StateWork> {
    const client = await this.db().connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const work = await this.run(client, index, events, check);
      await client.query('COMMIT');
      this.notify(work.changes);
      return work;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private notify(changes: StateChange[]): void {
    if (changes.length === 0) return;
    this.changesCounter?.inc(changes.length);
    for (const listener of this.listeners) {
      try {
        listener(changes);
      } catch (error) {
        this.options.log.warn({ err: error }, 'state engine: a listener failed');
      }
    }
  }

  /** Periodic reload for definitions changed on other nodes: off the hot path, swapped when done. */
  private async refresh(): Promise<void> {
    try {
      const version = this.version;
      const index = new RoutingIndex(await loadDefinitions(this.db()));
      if (version === this.version && version >= this.loadedVersion)
        [this.index, this.loadedVersion] = [index, version];
    } catch (error) {
      this.options.log.warn({ err: error }, 'state engine: reloading definitions failed');
    }
  }

  private db(): pg.Pool {
    if (!this.pool) {
      this.pool = new pg.Pool({
        connectionString: this.options.databaseUrl,
        max: 3,
        allowExitOnIdle: true,
        application_name: 'stellwerk-state-engine',
      });
      // An idle connection dropped by the server (restart, failover) must not crash the process.
      this.pool.on('error', () => undefined);
    }
    return this.pool;
  }
}

/**
 * Runs of consecutive events from the same device update (same packet, index and time): the
 * state work applies each run together, so aggregates over several of its keys see them at once.
 */
function togetherGroups(events: StateEvent[]): StateEvent[][] {
  const groups: StateEvent[][] = [];
  for (const e of events) {
    const last = groups.at(-1)?.[0];
    const together =
      last?.seq !== undefined &&
      e.seq !== undefined &&
      last.seq[0] === e.seq[0] &&
      last.seq[1] === e.seq[1] &&
      last.time.getTime() === e.time.getTime();
    if (together) groups.at(-1)!.push(e);
    else groups.push([e]);
  }
  return groups;
}
