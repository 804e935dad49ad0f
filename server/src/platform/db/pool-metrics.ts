import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Metrics } from '../metrics.js';

/** A connection pool's state at one scrape. */
export interface PoolUsage {
  /** Connections checked out by a query or transaction. */
  inUse: number;
  /** Connections open and free. */
  idle: number;
  /** Callers waiting for a connection: above 0 for long, the pool is too small or the database slow. */
  waiting: number;
  max: number;
}

const tracked = new WeakMap<Metrics, Map<string, () => PoolUsage>>();

/**
 * Reports a pool as `stellwerk_database_pool_*{pool=name}` at every scrape of `metrics`. A pool
 * tracked again under the same name (one re-created after a restart) replaces the earlier one; the
 * ingest worker thread tracks its own pools in its registry, merged into the same families.
 */
export function trackPool(metrics: Metrics, name: string, usage: () => PoolUsage): void {
  let pools = tracked.get(metrics);
  if (!pools) {
    pools = new Map();
    tracked.set(metrics, pools);
    registerFamilies(metrics, pools);
  }
  pools.set(name, usage);
}

export const pgPoolUsage =
  (pool: pg.Pool): (() => PoolUsage) =>
  () => ({
    inUse: pool.totalCount - pool.idleCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    max: pool.options.max ?? 10,
  });

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** MikroORM's pool (knex over tarn): the one behind every request's EntityManager. */
export function ormPoolUsage(orm: MikroORM): () => PoolUsage {
  return () => {
    // knex types its client as `any`; tarn's pool is what it holds (absent before the first query).
    const client = orm.em.getConnection().getKnex().client as { pool?: TarnPool };
    const pool = client.pool;
    if (!pool) return { inUse: 0, idle: 0, waiting: 0, max: 0 };
    return { inUse: pool.numUsed(), idle: pool.numFree(), waiting: pool.numPendingAcquires(), max: pool.max };
  };
}

function registerFamilies(metrics: Metrics, pools: Map<string, () => PoolUsage>): void {
  const each = (read: (name: string, usage: PoolUsage) => void) => {
    for (const [name, usage] of pools) {
      try {
        read(name, usage());
      } catch {
        // A pool being torn down reads as absent for this scrape.
      }
    }
  };
  metrics.gauge(
    'stellwerk_database_pool_connections',
    'PostgreSQL connections of a pool by state (in_use, idle)',
    ['pool', 'state'],
    (gauge) => {
      gauge.reset();
      each((pool, usage) => {
        gauge.set({ pool, state: 'in_use' }, usage.inUse);
        gauge.set({ pool, state: 'idle' }, usage.idle);
      });
    },
  );
  metrics.gauge(
    'stellwerk_database_pool_waiting',
    'Queries waiting for a connection of a pool',
    ['pool'],
    (gauge) => {
      gauge.reset();
      each((pool, usage) => gauge.set({ pool }, usage.waiting));
    },
  );
  metrics.gauge(
    'stellwerk_database_pool_max',
    'Largest number of connections a pool opens',
    ['pool'],
    (gauge) => {
      gauge.reset();
      each((pool, usage) => gauge.set({ pool }, usage.max));
    },
  );
}
