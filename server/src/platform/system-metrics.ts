import { statfs } from 'node:fs/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { VERSION } from '../version.js';
import { ormPoolUsage, trackPool } from './db/pool-metrics.js';
import type { Metrics } from './metrics.js';

export interface SystemMetricsOptions {
  orm: MikroORM;
  /** STELLWERK_DATA_DIR and STELLWERK_SPOOL_DIR: their file systems' free space is reported. */
  dataDir: string;
  spoolDir: string;
}

/**
 * What an operator watches about the process and its machine beyond prom-client's defaults: the
 * build, MikroORM's connection pool (the other pools are tracked where they are made) and the free
 * space of the disks the database and the packet spool write to.
 */
export function registerSystemMetrics(metrics: Metrics, options: SystemMetricsOptions): void {
  metrics
    .gauge('stellwerk_build_info', 'Stellwerk version and Node.js runtime of this node (always 1)', [
      'version',
      'nodejs',
    ])
    .set({ version: VERSION, nodejs: process.version }, 1);
  trackPool(metrics, 'orm', ormPoolUsage(options.orm));

  const dirs = { data: options.dataDir, spool: options.spoolDir };
  const read = async () =>
    Promise.all(
      Object.entries(dirs).map(async ([dir, path]) => {
        try {
          const stats = await statfs(path);
          // bavail, not bfree: what this (unprivileged) process may still write.
          return { dir, free: stats.bavail * stats.bsize, size: stats.blocks * stats.bsize };
        } catch {
          return null;
        }
      }),
    );
  metrics.gauge(
    'stellwerk_disk_free_bytes',
    'Free bytes of the file system holding a directory (data, spool) that Stellwerk may write',
    ['dir'],
    async (gauge) => {
      gauge.reset();
      for (const disk of await read()) if (disk) gauge.set({ dir: disk.dir }, disk.free);
    },
  );
  metrics.gauge(
    'stellwerk_disk_size_bytes',
    'Size of the file system holding a directory (data, spool)',
    ['dir'],
    async (gauge) => {
      gauge.reset();
      for (const disk of await read()) if (disk) gauge.set({ dir: disk.dir }, disk.size);
    },
  );
}
