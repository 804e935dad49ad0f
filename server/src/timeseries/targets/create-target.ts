import type pg from 'pg';
import type { TimeSeriesTargetSpec } from '../timeseries-targets.config.js';
import type { TimeSeriesTarget } from '../timeseries.types.js';
import { InfluxDbV1Target } from './influxdb-v1.target.js';
import { InfluxDbV2Target } from './influxdb-v2.target.js';
import { PostgresTarget } from './postgres.target.js';

/** One target from its configuration; `pool` is the server's own database (the postgres target). */
export function createTarget(spec: TimeSeriesTargetSpec, pool: pg.Pool): TimeSeriesTarget {
  switch (spec.kind) {
    case 'postgres':
      return new PostgresTarget(spec.name, pool);
    case 'influxdb-v1':
      return new InfluxDbV1Target({
        name: spec.name,
        url: spec.url!,
        database: spec.database ?? 'stellwerk',
        measurement: spec.measurement,
        ...(spec.username !== undefined ? { username: spec.username } : {}),
        ...(spec.password !== undefined ? { password: spec.password } : {}),
      });
    case 'influxdb-v2':
      return new InfluxDbV2Target({
        name: spec.name,
        url: spec.url!,
        flavor: spec.flavor ?? 'influxdb',
        measurement: spec.measurement,
        ...(spec.org !== undefined ? { org: spec.org } : {}),
        ...(spec.bucket !== undefined ? { bucket: spec.bucket } : {}),
        ...(spec.token !== undefined ? { token: spec.token } : {}),
      });
  }
}
