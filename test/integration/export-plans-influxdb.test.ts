import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { startInfluxDb, type InfluxDb } from './support/influxdb.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { downloadRows, runPlan, seedExportWorld, type ExportWorld } from './support/export-world.js';
import { CLUSTER_PLAN, DAILY_PLAN, EXCEL_PLAN, expectedOptionRows } from './support/export-expectations.js';
import {
  deviceDailyPlan,
  devicePointsPlan,
  expectedDeviceRows,
  seedExportDevices,
} from './support/export-devices.js';

// Export plans with InfluxDB 1.x as the only time-series target: the same files as on PostgreSQL
// (raw points read window by window, averages evaluated by the query engine), for twins and
// devices, and a run while
// influxd is down ends failed with its reason.

let t: TestApp;
let influx: InfluxDb;
let pool: pg.Pool;
let world: ExportWorld;
let call: ReturnType<typeof caller>;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-exports-influx-'));

beforeAll(async () => {
  influx = await startInfluxDb();
  t = await createTestApp({
    clock: () => new Date('2026-11-05T12:00:00Z'),
    env: { STELLWERK_DATA_DIR: dataDir, STELLWERK_TIMESERIES_TARGETS: `influxdb-v1+${influx.url}/exports` },
  });
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 2 });
  const [target] = t.services.timeseries.store.targets;
  expect(target!.kind).toBe('influxdb-v1');
  world = await seedExportWorld(pool, t.rootAccountId, (points) => target!.write(points));
  call = caller(t, bearer(await login(t)));
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await t?.close();
  await influx?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const create = async (body: Record<string, unknown>) =>
  expectStatus<{ id: string }>(await call('POST', '/xapi/v1/export-plans', body), 201).id;

describe('export plans on InfluxDB 1.x', () => {
  it('writes the same cells as on PostgreSQL for raw points, clusters and daily averages', async () => {
    const excel = await runPlan(t, call, await create(EXCEL_PLAN));
    expect(excel.status, JSON.stringify(excel.errors)).toBe('finished');
    expect(await downloadRows(call, excel.id, { delimiter: ';' })).toEqual(
      expectedOptionRows(world, 'excel'),
    );
    const cluster = await runPlan(t, call, await create(CLUSTER_PLAN));
    expect(await downloadRows(call, cluster.id, { gzip: true })).toEqual(
      expectedOptionRows(world, 'cluster'),
    );
    const daily = await runPlan(t, call, await create(DAILY_PLAN));
    expect(await downloadRows(call, daily.id)).toEqual(expectedOptionRows(world, 'daily'));
  });

  it('writes the same cells for devices: raw points and daily averages', async () => {
    const [target] = t.services.timeseries.store.targets;
    const devices = await seedExportDevices(pool, t.rootAccountId, world, (stateId, twinId, points) =>
      target!.write(
        points.map((p) => ({
          accountId: t.rootAccountId,
          twinId,
          stateId,
          stateKey: 'volumeFlow',
          time: new Date(p.time),
          value: p.value,
          text: null,
        })),
      ),
    );
    const points = await runPlan(t, call, await create(devicePointsPlan(devices)));
    expect(points.status, JSON.stringify(points.errors)).toBe('finished');
    expect(await downloadRows(call, points.id, { delimiter: ';' })).toEqual(
      expectedDeviceRows(world, 'points'),
    );
    const daily = await runPlan(t, call, await create(deviceDailyPlan(devices)));
    expect(await downloadRows(call, daily.id)).toEqual(expectedDeviceRows(world, 'daily'));
  });

  it('ends failed with the reason when the target is down, and leaves no file', async () => {
    const plan = await create(EXCEL_PLAN);
    await influx.kill();
    const job = await runPlan(t, call, plan);
    expect(job.status).toBe('failed');
    expect(job.errors).toHaveLength(1);
    expect(job.errors[0]!.message).toMatch(/time-series|InfluxDB|target|fetch|ECONNREFUSED/i);
    expect((await call('GET', `/xapi/v1/jobs/${job.id}/file`)).statusCode).toBe(404);
  });
});
