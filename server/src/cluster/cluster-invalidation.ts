import type { ClusterBus } from './cluster-bus.js';

export interface ClusterCache<A> {
  /** Drops the stale entries on this node; `arg` as the node that changed the data passed it. */
  apply(arg: A | undefined): void;
  /** Drops everything (after a bus outage, when invalidations may have been missed). */
  dropAll?(): void;
}

/**
 * Cluster-wide invalidation of in-memory caches of database data (ADR 0131). Each cache registers
 * how to drop its entries and gets back `announce`, which the node that changed the data calls after
 * its commit: every other node then drops its own entries at once. `announce` does not touch the
 * local cache; the local path stays as it was on a single node.
 */
export class ClusterInvalidation {
  private readonly caches = new Map<string, ClusterCache<unknown>>();
  /** Set while applying a remote message, so a local listener that announces does not echo it back. */
  private replaying = false;

  constructor(private readonly bus: ClusterBus) {
    bus.subscribe('invalidate', ({ cache, key }) => {
      const entry = this.caches.get(cache);
      if (!entry) return;
      this.replaying = true;
      try {
        entry.apply(key === undefined ? undefined : (JSON.parse(key) as unknown));
      } finally {
        this.replaying = false;
      }
    });
  }

  register<A>(name: string, cache: ClusterCache<A>): (arg?: A) => void {
    if (this.caches.has(name)) throw new Error(`Cluster cache ${name} is registered twice`);
    this.caches.set(name, cache);
    return (arg) => this.announce(name, arg);
  }

  /** Tells the other nodes that `name`'s entries for `arg` (undefined: all) are stale. */
  announce(name: string, arg?: unknown): void {
    if (this.replaying || !this.bus.clustered) return;
    this.bus.publish('invalidate', { cache: name, key: arg === undefined ? undefined : JSON.stringify(arg) });
  }

  /** Every registered cache drops everything (a node back on the bus may have missed messages). */
  dropAll(): void {
    this.replaying = true;
    try {
      for (const cache of this.caches.values()) (cache.dropAll ?? (() => cache.apply(undefined)))();
    } finally {
      this.replaying = false;
    }
  }
}
