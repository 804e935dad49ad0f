import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../server/src/platform/metrics.js';
import { listPartitions } from '../../server/src/timeseries/partitions.js';
import { RetentionJob } from '../../server/src/timeseries/retention.js';
import { DEFAULT_TIMESERIES_TARGETS } from '../../server/src/timeseries/timeseries-targets.config.js';
import { createTimeSeries, type TimeSeries } from '../../server/src/timeseries/timeseries.module.js';
import { OutboxSink } from '../../server/src/timeseries/outbox.js';
import { bearer, login } from './support/identity.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';
import {
  appendToOutbox,
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

const newModule = () => {
  const module = createTimeSeries({
    databaseUrl: String(t.orm.config.get('clientUrl')),
    targets: DEFAULT_TIMESERIES_TARGETS,
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

describe('outbox delivery', () => {
  const start = new Date('2026-11-10T00:00:00Z');

  it('never skips a batch that commits after a later one, nor waits forever on a rolled-back one', async () => {
    const base = await count('SELECT count(*) AS n FROM ts_points');
    await ts.writer.start();
    const sink = new OutboxSink();
    const slow = await ts.pool.connect();
    await slow.query('BEGIN');
    await sink.append(slow, pointsOf(world, 0, start, 10));
    const aborted = await ts.pool.connect();
    await aborted.query('BEGIN');
    await sink.append(aborted, pointsOf(world, 0, start, 1000));
    await appendToOutbox(ts.pool, pointsOf(world, 1, start, 5));
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The later batch is committed but waits behind the open one.
    expect(await count('SELECT count(*) AS n FROM ts_points')).toBe(base);
    await slow.query('COMMIT');
    slow.release();
    await aborted.query('ROLLBACK');
    aborted.release();
    await waitFor(async () =>
      (await count('SELECT count(*) AS n FROM ts_points')) === base + 15 ? true : undefined,
    );
    await appendToOutbox(ts.pool, pointsOf(world, 1, new Date(start.getTime() + 60_000), 5));
    await waitFor(async () =>
      (await count('SELECT count(*) AS n FROM ts_points')) === base + 20 ? true : undefined,
    );
  });

  it('reports the backlog per target in /metrics', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.body).toMatch(/stellwerk_timeseries_backlog_rows\{target="postgres"[^}]*\} \d+/);
    expect(response.body).toMatch(/stellwerk_timeseries_backlog_points\{target="postgres"[^}]*\} \d+/);
  });

  it('runs one writer per target across nodes, and another node takes over when it stops', async () => {
    const other = newModule();
    await other.writer.start();
    const base = await count('SELECT count(*) AS n FROM ts_points');
    await appendToOutbox(ts.pool, pointsOf(world, 0, new Date('2026-11-11T00:00:00Z'), 2000), 200);
    await waitFor(async () =>
      (await count('SELECT count(*) AS n FROM ts_points')) === base + 2000 ? true : undefined,
    );
    expect([ts.writer.writers[0]!.active, other.writer.writers[0]!.active]).toEqual([true, false]);
    await ts.writer.stop();
    await appendToOutbox(ts.pool, pointsOf(world, 0, new Date('2026-11-12T00:00:00Z'), 500), 100);
    await waitFor(async () =>
      (await count('SELECT count(*) AS n FROM ts_points')) === base + 2500 ? true : undefined,
    );
    expect(other.writer.writers[0]!.active).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await count('SELECT count(*) AS n FROM ts_points')).toBe(base + 2500);
  });
});
