import type { StateValueType } from '../data-state.entity.js';
import { sourceStateIds, type StateSource } from '../state-source.js';
import { sourceDescriptor } from '../sources/index.js';
import type { SourceComputations, SourceCompute, SourceRoutings } from '../sources/state-source-kind.js';

/**
 * The state engine's in-memory view of every data state definition (immutable; rebuilt on reload):
 * - routes from device states to twin states, as each source's descriptor says (`routing`):
 *   `device` by (device uuid, key), `reference` by (account, twin referenceId, key) matched against
 *   the device's `referenceId` in the same account;
 * - the dependency graph of sources that read other states (`reads`), ranked in topological order.
 *   States on a cycle (the API refuses them; another node's stale definitions might not) and states
 *   downstream of one get no rank and are never recomputed;
 * - each definition with the computation its source's descriptor names (`compute`), looked up once
 *   here so the engine's per-update work reads a property instead.
 * No source type is named here or in the rest of the engine: a source declares these properties.
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

/** A definition the engine computes with `K`, its source narrowed to that computation's settings. */
export type ComputedDefinition<K extends SourceCompute> = StateDefinition & {
  readonly compute: K;
  readonly source: SourceComputations[K];
};

/** A definition with its source's computation (none: devices, users or rules set it). */
export type IndexedDefinition =
  | { [K in SourceCompute]: ComputedDefinition<K> }[SourceCompute]
  | (StateDefinition & { readonly compute: undefined });

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
  readonly byId = new Map<string, IndexedDefinition>();
  /** Ids of states that take part in a dependency cycle (or depend on one). */
  readonly unranked: string[] = [];
  private readonly byDevice = new Map<string, KeyRoutes>();
  private readonly byReference = new Map<string, KeyRoutes>();
  private readonly dependents = new Map<string, string[]>();
  private readonly rank = new Map<string, number>();
  private readonly downstreamMemo = new Map<string, string[]>();
  private readonly computing = new Map<SourceCompute, IndexedDefinition[]>();
  private routed = 0;

  constructor(definitions: StateDefinition[]) {
    for (const d of definitions) {
      const kind = d.source ? sourceDescriptor(d.source.type) : undefined;
      const indexed = { ...d, compute: kind?.compute } as IndexedDefinition;
      this.byId.set(d.id, indexed);
      if (indexed.compute) {
        const list = this.computing.get(indexed.compute);
        if (list) list.push(indexed);
        else this.computing.set(indexed.compute, [indexed]);
      }
      if (kind?.routing === 'device') {
        const s = d.source as SourceRoutings['device'];
        addRoute(this.byDevice, s.deviceId, s.stateKey, d.id);
        this.routed++;
      } else if (kind?.routing === 'reference' && d.referenceId) {
        const s = d.source as SourceRoutings['reference'];
        addRoute(this.byReference, referenceKey(d.accountId, d.referenceId), s.stateKey, d.id);
        this.routed++;
      }
    }
    for (const d of definitions) {
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

  /** Per-key routes for a device's updates (routed by the device, then by reference id). */
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

  /**
   * Calls `visit` for each state a device's update sets directly (routed by the device, then by
   * reference id; per key in the update's key order), with the key's value.
   */
  forEachRouted(
    device: DeviceAddress,
    states: Record<string, unknown>,
    visit: (stateId: string, value: unknown) => void,
  ): void {
    for (const byKey of this.routesOf(device))
      for (const key of Object.keys(states)) {
        const ids = byKey.get(key);
        if (ids) for (const stateId of ids) visit(stateId, states[key]);
      }
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

  /** Definitions the engine computes with `compute`, in definition order. */
  computedBy<K extends SourceCompute>(compute: K): readonly ComputedDefinition<K>[] {
    return (this.computing.get(compute) ?? []) as ComputedDefinition<K>[];
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
