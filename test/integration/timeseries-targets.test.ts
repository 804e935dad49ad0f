import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../server/src/platform/metrics.js';
import { createTimeSeries, type TimeSeries } from '../../server/src/timeseries/timeseries.module.js';
import type { TimeSeriesPoint, TimeSeriesTarget } from '../../server/src/timeseries/timeseries.types.js';
import { startInfluxDb, type InfluxDb } from './support/influxdb.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import {
  appendPoints,
  byStateAndTime,
  insertTwinWithStates,
  pointsOf,
  type TwinWithStates,
} from './support/timeseries-world.js';
import { startVictoriaMetrics, type VictoriaMetrics } from './support/victoria-metrics.js';
import { waitFor } from './support/wait.js';

/**
 * Points appended to the outbox arrive in PostgreSQL, InfluxDB 1.x (v1 API) and VictoriaMetrics
 * (v2 write API), each a real server on a free port, and read back equal from each.
 */
let t: TestApp;
let influx: InfluxDb;
let victoria: VictoriaMetrics;
let ts: TimeSeries;
let world: TwinWithStates;

const FAST = { pollMs: 20, backoffMs: [50, 100, 200], standbyMs: 100, reader: { gapGraceMs: 50 } };

beforeAll(async () => {
  [influx, victoria] = await Promise.all([startInfluxDb(), startVictoriaMetrics()]);
  t = await createTestApp({
    env: {
      STELLWERK_TIMESERIES_TARGETS: `postgres, influxdb-v1+${influx.url}/stellwerk_test, victoria-metrics+${victoria.url}`,
    },
  });
  ts = t.services.timeseries;
  world = await insertTwinWithStates(ts.pool, t.rootAccountId, ['flow', 'mode of "pump", A=1', 'on']);
});

afterAll(async () => {
  await ts?.runtime.stop();
  await t?.close();
  await Promise.all([influx?.stop(), victoria?.stop()]);
});

async function drained(writer: TimeSeries['writer']): Promise<true | undefined> {
  const backlog = await writer.backlog();
  return backlog.every((b) => b.rows === 0) ? true : undefined;
}

async function readAll(target: TimeSeriesTarget, from: Date, to: Date): Promise<TimeSeriesPoint[]> {
  if (target.name === 'victoria-metrics') await victoria.flush();
  return byStateAndTime(await target.readPoints({ stateIds: world.states.map((s) => s.id), from, to }));
}

describe('time-series targets', () => {
  const start = new Date(Date.now() - 3600_000);
  const end = new Date(start.getTime() + 3600_000);
  let expected: TimeSeriesPoint[];

  it('configures the targets in order from STELLWERK_TIMESERIES_TARGETS', () => {
    expect(ts.targets.map((target) => [target.name, target.kind])).toEqual([
      ['postgres', 'postgres'],
      ['influxdb-v1', 'influxdb-v1'],
      ['victoria-metrics', 'influxdb-v2'],
    ]);
  });

  it('delivers numbers, booleans, texts and empty values to every target and reads them back', async () => {
    expected = byStateAndTime([
      ...pointsOf(world, 0, start, 300),
      ...pointsOf(world, 1, start, 20, (i) => ({ value: null, text: i % 2 ? `auto "x", y=${i}` : 'manual' })),
      ...pointsOf(world, 2, start, 10, (i) =>
        i === 9 ? { value: null, text: null } : { value: i % 2, text: null },
      ),
    ]);
    await appendPoints(ts, expected, 100);
    await ts.runtime.start();
    await waitFor(() => drained(ts.writer), 20_000, { what: 'every target to drain the outbox' });
    for (const target of ts.targets) {
      const points = await waitFor(
        async () => {
          const read = await readAll(target, start, end);
          return read.length === expected.length ? read : undefined;
        },
        10_000,
        { what: `${target.name} to return every point` },
      );
      expect(points, target.name).toEqual(expected);
    }
  });

  it('reads a time range and a limit, oldest first', async () => {
    for (const target of ts.targets) {
      const from = new Date(start.getTime() + 10_000);
      const points = await target.readPoints({
        stateIds: [world.states[0]!.id],
        from,
        to: new Date(start.getTime() + 20_000),
        limit: 5,
      });
      expect(
        points.map((p) => p.time.getTime()),
        target.name,
      ).toEqual([0, 1, 2, 3, 4].map((i) => from.getTime() + i * 1000));
    }
  });

  it('external targets overwrite a point written again (retried batches leave no duplicates)', async () => {
    for (const target of ts.targets.filter((x) => x.kind !== 'postgres')) {
      await target.write(expected.slice(0, 50));
      expect(await readAll(target, start, end), target.name).toEqual(expected);
    }
  });

  it('InfluxDB 1.x: a write finds its database dropped behind its back, creates it and writes in the same call', async () => {
    const target = ts.targets.find((x) => x.name === 'influxdb-v1')!;
    const influxPost = (p: string, body: string | URLSearchParams) =>
      fetch(`${influx.url}${p}`, { method: 'POST', body });
    // InfluxDB itself accepts writes for a moment after a drop (into the dropped shards): drop until
    // a write is refused with 404, as the target's next write then is.
    let refused = false;
    for (let attempt = 0; attempt < 50 && !refused; attempt++) {
      expect(
        (await influxPost('/query', new URLSearchParams({ q: 'DROP DATABASE "stellwerk_test"' }))).status,
      ).toBe(200);
      const probe = await influxPost('/write?db=stellwerk_test&precision=ms', `probe v=1 ${Date.now()}`);
      refused = probe.status === 404;
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(refused).toBe(true);
    await target.write(expected);
    expect(await readAll(target, start, end)).toEqual(expected);
  });

  it('the postgres target holds each point exactly once after a writer restart', async () => {
    await ts.writer.stop();
    // A new process: cursors come from ts_target_cursors, not memory.
    const again = createTimeSeries({
      databaseUrl: String(t.orm.config.get('clientUrl')),
      targets: t.config.timeseriesTargets,
      metrics: new Metrics(),
      log: t.app.log,
      clock: () => new Date(),
      writer: FAST,
    });
    await again.writer.start();
    await appendPoints(again, pointsOf(world, 0, end, 5));
    await waitFor(() => drained(again.writer), 10_000, { what: 'the restarted writer to drain' });
    await again.runtime.stop();
    expected = byStateAndTime([...expected, ...pointsOf(world, 0, end, 5)]);
    const { rows } = await ts.pool.query<{ n: string }>('SELECT count(*) AS n FROM ts_points');
    expect(Number(rows[0]!.n)).toBe(expected.length);
    await ts.writer.start();
  });

  it('serves reads from the primary while it is healthy', async () => {
    expect((await ts.store.servingTarget()).name).toBe('postgres');
    const points = await ts.store.readPoints({ stateIds: [world.states[0]!.id], from: start, to: end });
    expect(points).toHaveLength(300);
  });
});
