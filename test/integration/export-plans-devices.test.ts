import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import {
  downloadRows,
  runPlan,
  seedExportWorld,
  wallClock,
  type ExportWorld,
} from './support/export-world.js';
import {
  deviceClusterPlan,
  deviceDailyPlan,
  devicePointsPlan,
  expectedDeviceRows,
  seedExportDevices,
  type DeviceWorld,
} from './support/export-devices.js';
import { TimeSeriesFixtures } from './support/timeseries-fixtures.js';

// Export plans over devices on the PostgreSQL target: conditions on type, properties, tags,
// title, hierarchy and subtree; both layouts, averages and formats, read back cell by cell; and a
// reader restricted to a permission scope exports only the devices (and series) it sees.

let t: TestApp;
let pool: pg.Pool;
let world: ExportWorld;
let devices: DeviceWorld;
let call: ReturnType<typeof caller>;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-exports-devices-'));

beforeAll(async () => {
  t = await createTestApp({
    clock: () => new Date('2026-11-05T12:00:00Z'),
    env: { STELLWERK_DATA_DIR: dataDir },
  });
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 2 });
  world = await seedExportWorld(pool, t.rootAccountId);
  const fx = new TimeSeriesFixtures(pool);
  devices = await seedExportDevices(pool, t.rootAccountId, world, (stateId, _twin, points) =>
    fx.points(stateId, points),
  );
  call = caller(t, bearer(await login(t)));
});

afterAll(async () => {
  await pool?.end();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const firstPath = (response: { json(): unknown }) =>
  (response.json() as { error: { details: Array<{ path: string }> } }).error.details[0]?.path;

const create = async (as: typeof call, body: Record<string, unknown>) =>
  expectStatus<{ id: string }>(await as('POST', '/xapi/v1/export-plans', body), 201).id;

describe('export plans over devices', () => {
  it('writes the series of the chosen devices with geolocation and properties as a German Excel file', async () => {
    const job = await runPlan(t, call, await create(call, devicePointsPlan(devices)));
    expect(job.status, JSON.stringify(job.errors)).toBe('finished');
    const expected = expectedDeviceRows(world, 'points');
    expect(job.total).toBe(expected.length - 1);
    expect(await downloadRows(call, job.id, { delimiter: ';' })).toEqual(expected);
  });

  it('writes a column per device state per packet time, and daily means on the zone’s wall clock', async () => {
    const cluster = await runPlan(t, call, await create(call, deviceClusterPlan(devices)));
    expect(cluster.status, JSON.stringify(cluster.errors)).toBe('finished');
    expect(await downloadRows(call, cluster.id, { gzip: true })).toEqual(
      expectedDeviceRows(world, 'cluster'),
    );
    const daily = await runPlan(t, call, await create(call, deviceDailyPlan(devices)));
    expect(await downloadRows(call, daily.id)).toEqual(expectedDeviceRows(world, 'daily'));
  });

  it('exports only the devices within the permission scopes of whoever saved the plan', async () => {
    const north = await userWithPermissions(
      t,
      bearer(await login(t)),
      'North exporter',
      ['exportPlan.read', 'exportPlan.manage', 'job.read'],
      { permissionScopeIds: [devices.north] },
    );
    const asNorth = caller(t, bearer(north.token));
    const everyDevice = {
      ...deviceClusterPlan(devices),
      title: 'Every meter',
      selection: { subject: 'devices', operator: 'and', conditions: [], states: ['volumeFlow'] },
      shape: { ...deviceClusterPlan(devices).shape, layout: 'points' },
      format: { ...deviceClusterPlan(devices).format, gzip: false },
    };
    const job = await runPlan(t, asNorth, await create(asNorth, everyDevice));
    expect(job.status, JSON.stringify(job.errors)).toBe('finished');
    const rows = await downloadRows(asNorth, job.id);
    const end = Date.parse('2026-11-01T04:00:00Z');
    expect(rows).toEqual([
      ['time', 'device', 'title', 'state', 'unit', 'value'],
      ...world.nyFlow
        .filter((p) => p.time < end)
        .map((p) => [
          wallClock(p.time, 'America/New_York'),
          'm-n1',
          'Meter N1',
          'volumeFlow',
          'm³/h',
          String(p.value),
        ]),
    ]);
    // The unrestricted admin's preview of the same definition holds M-B1 as well.
    const { title: _title, ...definition } = everyDevice;
    const preview = expectStatus<{ rows: string[][] }>(
      await call('POST', '/xapi/v1/export-plans/preview', definition),
      200,
    );
    expect(new Set(preview.rows.map((r) => r[1]))).toEqual(new Set(['m-b1']));
  });

  it('matches a device by the titles of its parents and itself', async () => {
    const { title: _title, ...definition } = deviceClusterPlan(devices);
    const byHierarchy = {
      ...definition,
      selection: {
        subject: 'devices',
        operator: 'and',
        conditions: [{ field: 'hierarchy', value: 'gateway ny / meter' }],
        states: [],
      },
    };
    const preview = expectStatus<{ rows: string[][] }>(
      await call('POST', '/xapi/v1/export-plans/preview', byHierarchy),
      200,
    );
    expect(preview.rows).toHaveLength(20);
    expect(new Set(preview.rows.map((r) => r[1]))).toEqual(new Set(['m-n1']));
  });

  it('refuses a condition the subject does not have and an address for devices', async () => {
    const base = devicePointsPlan(devices);
    const twinsByType = await call('POST', '/xapi/v1/export-plans', {
      ...base,
      selection: { ...base.selection, subject: 'twins' },
    });
    expect(twinsByType.statusCode).toBe(400);
    expect(errorCode(twinsByType)).toBe('VALIDATION_ERROR');
    expect(firstPath(twinsByType)).toBe('/selection/conditions/0/field');
    const address = await call('POST', '/xapi/v1/export-plans', {
      ...base,
      shape: { ...base.shape, address: true },
    });
    expect(address.statusCode).toBe(400);
    expect(firstPath(address)).toBe('/shape/address');
  });
});
