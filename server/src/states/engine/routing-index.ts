import type { StateValueType } from '../data-state.entity.js';
import { sourceStateIds, type StateSource } from '../state-source.js';

/**
 * The state engine's in-memory view of every data state definition (immutable; rebuilt on reload):
 * - routes from device states to twin states: `connector` and `hub` sources by (device uuid, key),
 *   `dynamic-routing` sources by (account, twin referenceId, key) matched against the device's
 *   `referenceId` in the same account;
 * - the dependency graph of `aggregate`, `time-aggregated` and `timeseries-aggregate` sources, ranked
 *   in topological order. States on a cycle (the API refuses them; another node's stale definitions
 *   might not) and states downstream of one get no rank and are never recomputed.
 */

export interface StateDefinition {
  id: string;
  twinId: string;
  accountId: string;
  key: string;
  valueType: StateValueType;
  source: StateSource | null;
  /** The account's IANA zone: calendar periods of time-aggregated states. */
  timeZone: string;
  /** The twin's referenceId (dynamic data routing). */
  referenceId: string | null;
}

/** What the ingest path knows about the device that sent an update. */
export interface DeviceAddress {
  deviceId: string;
  accountId: string;
  referenceId: string | null;
}

type KeyRoutes = Map<string, string[]>;

const referenceKey = (accountId: string, referenceId: string) => `${accountId}\u0000${referenceId}`;

function addRoute(index: Map<string, KeyRoutes>, at: string, stateKey: string, stateId: string): void {
  let routes = index.get(at);
  if (!routes) index.set(at, (routes = new Map<string, string[]>()));
  const ids = routes.get(stateKey);
  if (ids) ids.push(stateId);
  else routes.set(stateKey, [stateId]);
}

export class RoutingIndex {
  readonly byId = new Map<string, StateDefinition>();
  /** Ids of states that take part in a dependency cycle (or depend on one). */
  readonly unranked: string[] = [];
  private readonly byDevice = new Map<string, KeyRoutes>();
  private readonly byReference = new Map<string, KeyRoutes>();
  private readonly dependents = new Map<string, string[]>();
  private readonly rank = new Map<string, number>();
  private readonly downstreamMemo = new Map<string, string[]>();
  private routed = 0;

  constructor(definitions: StateDefinition[]) {
    for (const d of definitions) this.byId.set(d.id, d);
    for (const d of definitions) {
      const s = d.source;
      if (s?.type === 'connector' || s?.type === 'hub') {
        addRoute(this.byDevice, s.deviceId, s.stateKey, d.id);
        this.routed++;
      } else if (s?.type === 'dynamic-routing' && d.referenceId) {
        addRoute(this.byReference, referenceKey(d.accountId, d.referenceId), s.stateKey, d.id);
        this.routed++;
      }
      for (const from of this.sourcesOf(d)) {
        const list = this.dependents.get(from);
        if (list) list.push(d.id);
        else this.dependents.set(from, [d.id]);
      }
    }
    this.rankTopologically();
  }

  /** States fed by devices: when 0, a batch costs the engine nothing. */
  get routedCount(): number {
    return this.routed;
  }

  /** Per-key routes for a device's updates (connector and hub sources, then dynamic routing). */
  routesOf(device: DeviceAddress): KeyRoutes[] {
    const found: KeyRoutes[] = [];
    const direct = this.byDevice.get(device.deviceId);
    if (direct) found.push(direct);
    if (device.referenceId) {
      const dynamic = this.byReference.get(referenceKey(device.accountId, device.referenceId));
      if (dynamic) found.push(dynamic);
    }
    return found;
  }

  /** Direct sources of a state that exist. */
  sourcesOf(definition: StateDefinition): string[] {
    return sourceStateIds(definition.source).filter((id) => this.byId.has(id));
  }

  /** Every state that (transitively) depends on `stateId`, in topological order. */
  downstream(stateId: string): string[] {
    let found = this.downstreamMemo.get(stateId);
    if (found) return found;
    const seen = new Set<string>();
    const stack = [...(this.dependents.get(stateId) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id) || !this.rank.has(id)) continue;
      seen.add(id);
      for (const next of this.dependents.get(id) ?? []) stack.push(next);
    }
    found = [...seen].sort((a, b) => this.rank.get(a)! - this.rank.get(b)!);
    this.downstreamMemo.set(stateId, found);
    return found;
  }

  /** Every state that (transitively) depends on any of `stateIds`, in topological order. */
  downstreamOfAll(stateIds: string[]): string[] {
    if (stateIds.length === 1) return this.downstream(stateIds[0]!);
    const all = new Set(stateIds.flatMap((id) => this.downstream(id)));
    return [...all].sort((a, b) => this.rank.get(a)! - this.rank.get(b)!);
  }

  /** The states a change of `stateIds` reads or writes: them, their dependents and those dependents' sources. */
  closure(stateIds: Iterable<string>): string[] {
    const all = new Set<string>();
    for (const id of stateIds) {
      if (!this.byId.has(id)) continue;
      all.add(id);
      for (const d of this.downstream(id)) {
        all.add(d);
        for (const s of this.sourcesOf(this.byId.get(d)!)) all.add(s);
      }
    }
    return [...all];
  }

  /** Definitions whose source is one of `types`. */
  withSource<T extends StateSource['type']>(
    ...types: T[]
  ): Array<StateDefinition & { source: Extract<StateSource, { type: T }> }> {
    const wanted = new Set<string>(types);
    return [...this.byId.values()].filter(
      (d): d is StateDefinition & { source: Extract<StateSource, { type: T }> } =>
        d.source !== null && wanted.has(d.source.type),
    );
  }

  /** Kahn's algorithm over source → dependent edges; whatever a cycle blocks stays unranked. */
  private rankTopologically(): void {
    const waiting = new Map<string, number>();
    for (const d of this.byId.values()) waiting.set(d.id, this.sourcesOf(d).length);
    const ready = [...waiting].filter(([, n]) => n === 0).map(([id]) => id);
    let next = 0;
    while (ready.length > 0) {
      const id = ready.pop()!;
      this.rank.set(id, next++);
      for (const dependent of this.dependents.get(id) ?? []) {
        const left = waiting.get(dependent)! - 1;
        waiting.set(dependent, left);
        if (left === 0) ready.push(dependent);
      }
    }
    for (const id of this.byId.keys()) if (!this.rank.has(id)) this.unranked.push(id);
  }
}
