import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../server/src/platform/metrics.js';
import { listPartitions } from '../../server/src/timeseries/partitions.js';
import { RetentionJob } from '../../server/src/timeseries/retention.js';
import {
  DEFAULT_TIMESERIES_TARGETS,
  parseTimeSeriesTargets,
  type TimeSeriesTargetSpec,
} from '../../server/src/timeseries/timeseries-targets.config.js';
import { createTimeSeries, type TimeSeries } from '../../server/src/timeseries/timeseries.module.js';
import { bearer, login } from './support/identity.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';
import { startVictoriaMetrics, type VictoriaMetrics } from './support/victoria-metrics.js';
import {
  appendPoints,
  insertTwinWithStates,
  pointsOf,
  type TwinWithStates,
} from './support/timeseries-world.js';
import { waitFor } from './support/wait.js';

/** The PostgreSQL side: partitions, retention, the outbox's ordering guarantees, several nodes. */
let t: TestApp;
let now = new Date('2026-11-15T12:00:00Z');
const modules: TimeSeries[] = [];
let ts: TimeSeries;
let world: TwinWithStates;

const newModule = (targets: TimeSeriesTargetSpec[] = DEFAULT_TIMESERIES_TARGETS) => {
  const module = createTimeSeries({
    databaseUrl: String(t.orm.config.get('clientUrl')),
    targets,
    metrics: new Metrics(),
    log: t.app.log,
    clock: () => now,
    writer: { pollMs: 20, backoffMs: [50], standbyMs: 50, reader: { gapGraceMs: 50 } },
  });
  modules.push(module);
  return module;
};
const count = async (sql: string, params: unknown[] = []) =>
  Number((await ts.pool.query<{ n: string }>(sql, params)).rows[0]!.n);

beforeAll(async () => {
  t = await createTestApp();
  ts = newModule();
  world = await insertTwinWithStates(ts.pool, t.rootAccountId, ['level', 'flow']);
});

afterAll(async () => {
  for (const module of modules) await module.runtime.stop();
  await t?.close();
});

describe('partitions', () => {
  it('creates monthly partitions from the previous month to three months ahead', async () => {
    const report = await ts.partitions.run();
    expect(report?.created).toEqual([
      'ts_points_p2026_10',
      'ts_points_p2026_11',
      'ts_points_p2026_12',
      'ts_points_p2027_01',
      'ts_points_p2027_02',
    ]);
    expect((await ts.partitions.run())?.created).toEqual([]);
    const { rows } = await ts.pool.query<{ options: string[] }>(
      "SELECT reloptions AS options FROM pg_class WHERE relname = 'ts_points_p2026_11'",
    );
    expect(rows[0]!.options).toContain('autovacuum_vacuum_insert_threshold=100000');
    await ts.targets[0]!.write(pointsOf(world, 0, new Date('2026-11-30T23:59:58Z'), 4));
    expect(await count('SELECT count(*) AS n FROM ts_points_p2026_11')).toBe(2);
    expect(await count('SELECT count(*) AS n FROM ts_points_p2026_12')).toBe(2);
  });

  it("moves rows that landed in the default partition into their month's partition", async () => {
    await ts.targets[0]!.write([
      ...pointsOf(world, 0, new Date('2027-06-10T00:00:00Z'), 30),
      ...pointsOf(world, 1, new Date('2025-08-31T23:59:50Z'), 5),
    ]);
    expect(await count('SELECT count(*) AS n FROM ts_points_default')).toBe(35);
    const report = await ts.partitions.run();
    expect(report?.created).toEqual(['ts_points_p2025_08', 'ts_points_p2027_06']);
    expect(report?.movedFromDefault).toBe(35);
    expect(await count('SELECT count(*) AS n FROM ts_points_default')).toBe(0);
    expect(await count('SELECT count(*) AS n FROM ts_points_p2027_06')).toBe(30);
    expect(await count('SELECT count(*) AS n FROM ts_points_p2025_08')).toBe(5);
    const read = await ts.targets[0]!.readPoints({
      stateIds: [world.states[0]!.id],
      from: new Date('2027-06-01T00:00:00Z'),
      to: new Date('2027-07-01T00:00:00Z'),
    });
    expect(read).toHaveLength(30);
  });

  it('drops whole partitions older than the longest account retention', async () => {
    await ts.pool.query('UPDATE accounts SET retention_months = 12');
    now = new Date('2026-11-15T12:00:00Z');
    const report = await ts.partitions.run();
    expect(report?.dropped).toEqual(['ts_points_p2025_08']);
    const names = (await listPartitions(ts.pool)).map((p) => p.name);
    expect(names).not.toContain('ts_points_p2025_08');
    expect(names).toContain('ts_points_default');
    await ts.pool.query('UPDATE accounts SET retention_months = 24');
  });
});

describe('retention', () => {
  it('deletes points older than each account retention, decimal months included, in chunks', async () => {
    const token = await login(t);
    const created = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: bearer(token),
      payload: { title: 'Half a month', parentId: t.rootAccountId, retentionMonths: '0,5' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const short = await insertTwinWithStates(ts.pool, json<{ id: string }>(created).id, ['x']);
    const day = 24 * 3600_000;
    const at = (ms: number) => new Date(now.getTime() - ms);
    // 0.5 months = 15 days: 16 days old goes, 14 days old stays. 24 months: 25 months goes, 23 stays.
    await ts.targets[0]!.write([
      ...pointsOf(short, 0, at(16 * day), 7),
      ...pointsOf(short, 0, at(14 * day), 3),
      ...pointsOf(world, 1, at(25 * 31 * day), 4),
      ...pointsOf(world, 1, at(23 * 30 * day), 6),
    ]);
    const before = await count('SELECT count(*) AS n FROM ts_points');
    const job = new RetentionJob({
      databaseUrl: String(t.orm.config.get('clientUrl')),
      pool: ts.pool,
      log: t.app.log,
      clock: () => now,
      chunk: 2,
      pauseMs: 0,
    });
    const report = await job.run();
    expect(report?.deleted).toBe(11);
    expect(await count('SELECT count(*) AS n FROM ts_points')).toBe(before - 11);
    expect(
      await count('SELECT count(*) AS n FROM ts_points WHERE state_id = $1', [short.states[0]!.id]),
    ).toBe(3);
    expect(
      await count('SELECT count(*) AS n FROM ts_points WHERE state_id = $1 AND "time" < $2', [
        world.states[1]!.id,
        at(24 * 31 * day),
      ]),
    ).toBe(0);
    expect((await job.run())?.deleted).toBe(0);
    await job.stop();
  });
});

describe('points written with their state changes', () => {
  it('stores numbers, texts (empty, quoted, non-ASCII), nulls and millisecond times exactly', async () => {
    const at = new Date('2026-11-08T01:02:03.456Z');
    const texts = ['', 'a "b"\tc\nd', 'Größe ≤ 5 µm', null];
    const points = pointsOf(world, 1, at, 4, (i) => ({ value: i === 3 ? -0.125 : null, text: texts[i]! }));
    await appendPoints(ts, points);
    const read = await ts.targets[0]!.readPoints({
      stateIds: [world.states[1]!.id],
      from: at,
      to: new Date(at.getTime() + 10_000),
    });
    expect(read.map((p) => [p.time.toISOString(), p.value, p.text])).toEqual(
      points.map((p) => [p.time.toISOString(), p.value, p.text]),
    );
  });
});

describe('outbox delivery to an external target', () => {
  const start = new Date('2026-11-10T00:00:00Z');
  let victoria: VictoriaMetrics;
  let ext: TimeSeries;
  const targets = () => [
    ...DEFAULT_TIMESERIES_TARGETS,
    ...parseTimeSeriesTargets(`victoria-metrics+${victoria.url}`, 'STELLWERK_TIMESERIES_TARGETS'),
  ];
  /** Points VictoriaMetrics holds for the world's states: what its writer delivered. */
  const delivered = async (from = start) => {
    await victoria.flush();
    const points = await ext.targets[1]!.readPoints({
      stateIds: world.states.map((s) => s.id),
      from,
      to: new Date(from.getTime() + 7 * 24 * 3600_000),
    });
    return points.length;
  };

  beforeAll(async () => {
    victoria = await startVictoriaMetrics();
    ext = newModule(targets());
  });
  afterAll(() => victoria?.stop());

  it('writes the postgres points with their transaction and the outbox only for the external target', async () => {
    const before = await count('SELECT count(*) AS n FROM ts_points');
    const outboxBefore = await count('SELECT coalesce(sum(count), 0) AS n FROM ts_outbox');
    await appendPoints(ext, pointsOf(world, 0, new Date('2026-11-09T00:00:00Z'), 7));
    expect(await count('SELECT count(*) AS n FROM ts_points')).toBe(before + 7);
    expect(await count('SELECT coalesce(sum(count), 0) AS n FROM ts_outbox')).toBe(outboxBefore + 7);
    expect(ext.writer.writers.map((w) => w.target.name)).toEqual(['victoria-metrics']);
    // The default configuration (postgres only) leaves the outbox alone.
    await appendPoints(ts, pointsOf(world, 1, new Date('2026-11-09T00:00:00Z'), 3));
    expect(await count('SELECT coalesce(sum(count), 0) AS n FROM ts_outbox')).toBe(outboxBefore + 7);
  });

  it('never skips a batch that commits after a later one, nor waits forever on a rolled-back one', async () => {
    await ext.writer.start();
    const slow = await ext.pool.connect();
    await slow.query('BEGIN');
    await ext.sink.append(slow, pointsOf(world, 0, start, 10));
    const aborted = await ext.pool.connect();
    await aborted.query('BEGIN');
    // Another hour than the slow batch: both points are late (older than an hour), so both would
    // otherwise mark the same hour for the rollup fold, and the second writer would wait for the
    // first (in production one state's writes are serial anyway).
    await ext.sink.append(aborted, pointsOf(world, 0, new Date(start.getTime() + 2 * 3_600_000), 1000));
    await appendPoints(ext, pointsOf(world, 1, start, 5));
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The later batch is committed but waits behind the open one.
    expect(await delivered()).toBe(0);
    await slow.query('COMMIT');
    slow.release();
    await aborted.query('ROLLBACK');
    aborted.release();
    await waitFor(async () => ((await delivered()) === 15 ? true : undefined));
    await appendPoints(ext, pointsOf(world, 1, new Date(start.getTime() + 60_000), 5));
    await waitFor(async () => ((await delivered()) === 20 ? true : undefined));
  });

  it('reports the backlog per external target in /metrics', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.body).not.toMatch(/stellwerk_timeseries_backlog_rows\{target="postgres"/);
    const metrics = await ext.writer.backlog();
    expect(metrics.map((b) => b.target)).toEqual(['victoria-metrics']);
  });

  it('runs one writer per target across nodes, and another node takes over when it stops', async () => {
    const other = newModule(targets());
    await other.writer.start();
    const day = new Date('2026-11-11T00:00:00Z');
    await appendPoints(ext, pointsOf(world, 0, day, 2000), 200);
    await waitFor(async () => ((await delivered(day)) === 2000 ? true : undefined), 20_000);
    expect([ext.writer.writers[0]!.active, other.writer.writers[0]!.active]).toEqual([true, false]);
    await ext.writer.stop();
    await appendPoints(ext, pointsOf(world, 0, new Date('2026-11-12T00:00:00Z'), 500), 100);
    await waitFor(async () => ((await delivered(day)) === 2500 ? true : undefined), 20_000);
    expect(other.writer.writers[0]!.active).toBe(true);
  });
});
