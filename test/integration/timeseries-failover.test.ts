import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../server/src/platform/metrics.js';
import { parseTimeSeriesTargets } from '../../server/src/timeseries/timeseries-targets.config.js';
import { createTimeSeries, type TimeSeries } from '../../server/src/timeseries/timeseries.module.js';
import type { TimeSeriesPoint } from '../../server/src/timeseries/timeseries.types.js';
import { startInfluxDb, type InfluxDb } from './support/influxdb.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import {
  appendPoints,
  byStateAndTime,
  insertTwinWithStates,
  pointsOf,
  type TwinWithStates,
} from './support/timeseries-world.js';
import { waitFor } from './support/wait.js';

/**
 * Failover: targets [influxdb-v1 (primary), postgres]. influxd is killed while
 * 10,000 points are being appended and started again on the same data directory and port;
 * meanwhile reads are served by postgres. Afterwards every point is in both targets, once.
 */
let t: TestApp;
let influx: InfluxDb;
let ts: TimeSeries;
let world: TwinWithStates;

beforeAll(async () => {
  influx = await startInfluxDb();
  t = await createTestApp();
  ts = createTimeSeries({
    databaseUrl: String(t.orm.config.get('clientUrl')),
    targets: parseTimeSeriesTargets(`influxdb-v1+${influx.url}/failover, postgres`, 'TEST'),
    metrics: new Metrics(),
    log: t.app.log,
    clock: () => new Date(),
    writer: { pollMs: 20, backoffMs: [50, 100, 200, 400], standbyMs: 100, reader: { gapGraceMs: 50 } },
    store: { healthTtlMs: 0 },
  });
  world = await insertTwinWithStates(ts.pool, t.rootAccountId, ['a', 'b', 'c', 'd']);
});

afterAll(async () => {
  await ts?.runtime.stop();
  await t?.close();
  await influx?.stop();
});

const backlogOf = async (target: string) => (await ts.writer.backlog()).find((b) => b.target === target)!;

describe('time-series failover', () => {
  const start = new Date(Date.now() - 24 * 3600_000);
  const all = { from: start, to: new Date(start.getTime() + 48 * 3600_000) };

  it('loses no point while the primary is down, and serves reads from the secondary meanwhile', async () => {
    const expected: TimeSeriesPoint[] = byStateAndTime(
      world.states.flatMap((_, i) =>
        pointsOf(world, i, start, 2500, (n) => ({ value: n * 10 + i, text: null })),
      ),
    );
    expect(expected).toHaveLength(10_000);
    const stateIds = world.states.map((s) => s.id);
    await ts.writer.start();
    expect((await ts.store.servingTarget()).name).toBe('influxdb-v1');

    // 100 commits of 100 points; influxd dies after the 30th.
    for (let row = 0; row < 100; row++) {
      await appendPoints(ts, expected.slice(row * 100, row * 100 + 100), 100);
      if (row === 30) await influx.kill();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    const [serving, read] = [
      await ts.store.servingTarget(),
      await ts.store.readPointsWithSource({ stateIds, ...all }),
    ];
    expect(serving.name).toBe('postgres');
    expect(read.target).toBe('postgres');
    // Postgres got every point with its transaction: nothing to wait for while influxd is down.
    expect(byStateAndTime(await ts.store.readPoints({ stateIds, ...all }))).toEqual(expected);
    // The outage's points wait in the outbox (the durable spool), not in memory.
    const spooled = await backlogOf('influxdb-v1');
    expect(spooled.points).toBeGreaterThan(5000);
    await ts.writer.cleanup();
    const { rows } = await ts.pool.query<{ n: string }>('SELECT coalesce(sum(count), 0) AS n FROM ts_outbox');
    expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(spooled.points);

    await influx.restart();
    await waitFor(async () => ((await backlogOf('influxdb-v1')).rows === 0 ? true : undefined), 30_000, {
      what: 'influxd to receive its backlog',
    });

    const [inPostgres, inInflux] = await Promise.all(
      ts.targets.map(async (target) => byStateAndTime(await target.readPoints({ stateIds, ...all }))),
    );
    expect(inInflux).toHaveLength(10_000);
    expect(inPostgres).toHaveLength(10_000);
    expect(inInflux).toEqual(expected);
    expect(inPostgres).toEqual(expected);
    const counted = await ts.pool.query<{ n: string }>('SELECT count(*) AS n FROM ts_points');
    expect(Number(counted.rows[0]!.n)).toBe(10_000);

    // Back and caught up: the primary serves again; the drained outbox is cleaned up.
    expect((await ts.store.servingTarget()).name).toBe('influxdb-v1');
    await ts.writer.cleanup();
    const left = await ts.pool.query<{ n: string }>('SELECT count(*) AS n FROM ts_outbox');
    expect(Number(left.rows[0]!.n)).toBe(0);
  });
});
