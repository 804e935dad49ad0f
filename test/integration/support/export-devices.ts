import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { comma, escaped, PLAIN_SHAPE, STANDARD } from './export-expectations.js';
import { wallClock, type ExportWorld } from './export-world.js';

/**
 * Devices over the export world's points: meter M-B1 (Berlin) feeds Pumpe B1's `flow` and `status`
 * as its `volumeFlow` and `status`, meter M-N1 (New York, in permission scope "North") feeds Pump
 * N1's `flow`. Werk Berlin takes M-B1's `volumeFlow` too, later and with points of its own: a device
 * state fed into two twins is one series, the first. A pressure sensor of another type feeds
 * nothing; meter M-N2, outside scope North, feeds Pump N1 as well. Devices, drivers and sources go straight into the tables; points stay where the world
 * wrote them (PostgreSQL or another target).
 */
export interface DeviceWorld {
  flowMeter: string;
  pressureSensor: string;
  mB1: string;
  mN1: string;
  gatewayNy: string;
  north: string;
}

export async function seedExportDevices(
  pool: pg.Pool,
  accountId: string,
  world: ExportWorld,
  writeCopy: (
    stateId: string,
    twinId: string,
    points: Array<{ time: number; value: number }>,
  ) => Promise<void>,
): Promise<DeviceWorld> {
  const q = (text: string, params: unknown[]) => pool.query(text, params);
  const connector = randomUUID();
  await q(
    `INSERT INTO connectors (id, account_id, title, type, active, config, created_at, updated_at)
     VALUES ($1, $2, 'Meters', 'webhook-in', true, '{}', now(), now())`,
    [connector, accountId],
  );
  const driver = async (title: string) => {
    const id = randomUUID();
    await q(
      `INSERT INTO device_drivers (id, account_id, title, description, shared, parser, target_variables, health_config, created_at, updated_at)
       VALUES ($1, $2, $3, '', false, '{"type":"json"}', '[]', '{"rules":[]}', now(), now())`,
      [id, accountId, title],
    );
    return id;
  };
  const flowMeter = await driver('Flow meter');
  const pressureSensor = await driver('Pressure sensor');
  const north = randomUUID();
  await q(
    `INSERT INTO permission_scopes (id, account_id, title, description, created_at, updated_at)
     VALUES ($1, $2, 'North', '', now(), now())`,
    [north, accountId],
  );
  const device = async (
    deviceId: string,
    title: string,
    driverId: string,
    kv: Record<string, unknown>,
    tags: string[],
    scope: string | null,
  ) => {
    const id = randomUUID();
    await q(
      `INSERT INTO virtual_devices (id, account_id, connector_id, driver_id, permission_scope_id, device_id, title, description,
          tags, groups, key_value_data, activation_method, skip_frame_counter_check, health_state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, '', $8::text[], '{}', $9::jsonb, 'OTAA', false, 'Unknown', now(), now())`,
      [id, accountId, connector, driverId, scope, deviceId, title, tags, JSON.stringify(kv)],
    );
    return id;
  };
  const mB1 = await device('m-b1', 'Meter B1', flowMeter, { city: 'Berlin', lot: 7 }, ['meter'], null);
  const mN1 = await device('m-n1', 'Meter N1', flowMeter, { city: 'New York' }, ['meter'], north);
  // M-N1 hangs below a gateway that sends nothing itself: subtree and hierarchy conditions reach it.
  const gatewayNy = await device('gw-ny', 'Gateway NY', pressureSensor, {}, [], null);
  await q('UPDATE virtual_devices SET parent_id = $2 WHERE id = $1', [mN1, gatewayNy]);
  await device('p-b1', 'Pressure B1', pressureSensor, { city: 'Berlin' }, ['meter'], null);
  await q(
    `INSERT INTO device_states (device_id, key, value, timestamp) VALUES ($1, '_meta.location', $2::jsonb, now())`,
    [mB1, JSON.stringify({ latitude: 52.5, longitude: 13.4, source: 'gps' })],
  );
  const feed = (stateId: string, deviceUuid: string, key: string) =>
    q(`UPDATE data_states SET source = $2::jsonb WHERE id = $1`, [
      stateId,
      JSON.stringify({ type: 'connector', connectorId: connector, deviceId: deviceUuid, stateKey: key }),
    ]);
  await feed(world.ids.bFlow!, mB1, 'volumeFlow');
  await feed(world.ids.bStatus!, mB1, 'status');
  await feed(world.ids.nFlow!, mN1, 'volumeFlow');
  // The NY pump and its plant are in scope North too: a North reader sees M-N1's series.
  await q(`UPDATE digital_twins SET effective_permission_scope_id = $2 WHERE id = ANY($1::uuid[])`, [
    [world.ids.ny, world.ids.n1],
    north,
  ]);
  const copy = randomUUID();
  await q(
    `INSERT INTO data_states (id, account_id, twin_id, key, title, unit, meta, engine, source, created_at, updated_at)
     VALUES ($1, $2, $3, 'meterFlow', 'copy', 'l/s', '{}', '{}', $4::jsonb, now() + interval '1 second', now())`,
    [
      copy,
      accountId,
      world.ids.berlin,
      JSON.stringify({ type: 'connector', connectorId: connector, deviceId: mB1, stateKey: 'volumeFlow' }),
    ],
  );
  await writeCopy(copy, world.ids.berlin!, [{ time: Date.parse('2026-10-25T10:15:00Z'), value: 999 }]);
  // A meter outside scope North feeding Pump N1, which North sees: its series stays the device's.
  const mN2 = await device('m-n2', 'Meter N2', flowMeter, { city: 'New York' }, ['spare'], null);
  const spare = randomUUID();
  await q(
    `INSERT INTO data_states (id, account_id, twin_id, key, title, unit, meta, engine, source, created_at, updated_at)
     VALUES ($1, $2, $3, 'spareFlow', 'spare', 'm³/h', '{}', '{}', $4::jsonb, now(), now())`,
    [
      spare,
      accountId,
      world.ids.n1,
      JSON.stringify({ type: 'connector', connectorId: connector, deviceId: mN2, stateKey: 'volumeFlow' }),
    ],
  );
  await writeCopy(spare, world.ids.n1!, [{ time: Date.parse('2026-10-31T10:30:00Z'), value: 555 }]);
  return { flowMeter, pressureSensor, mB1, mN1, gatewayNy, north };
}

/** Meters of the flow-meter type in Berlin, as a German Excel file with geolocation and properties. */
export const devicePointsPlan = (d: DeviceWorld) => ({
  title: 'Meters Berlin',
  selection: {
    subject: 'devices',
    operator: 'and',
    conditions: [
      { field: 'type', value: d.flowMeter },
      { field: 'property', key: 'city', value: 'Berlin' },
      { field: 'tag', value: 'meter' },
    ],
    states: [],
  },
  range: { from: '2026-10-25T00:00', to: '2026-10-26T00:00' },
  timeZone: 'Europe/Berlin',
  shape: { ...PLAIN_SHAPE, geolocation: true, customProperties: ['lot', 'city'] },
  format: {
    delimiter: ';',
    decimalSeparator: ',',
    bom: true,
    headerNames: { device: 'Gerät', 'property:lot': 'Los' },
    escapeFormulas: true,
    gzip: false,
  },
});

/** Either meter by title or by being below the NY gateway, a column per state, over New York's month end. */
export const deviceClusterPlan = (d: DeviceWorld) => ({
  title: 'Meters cluster',
  selection: {
    subject: 'devices',
    operator: 'or',
    conditions: [
      { field: 'title', value: 'meter b1' },
      { field: 'device', value: d.gatewayNy },
    ],
    states: ['volumeFlow', 'status'],
  },
  range: { relative: 'previousMonth' },
  timeZone: 'America/New_York',
  shape: { ...PLAIN_SHAPE, layout: 'clusterPerPacket' },
  format: { ...STANDARD, gzip: true },
});

/** Daily means of every meter not of the pressure type (the pressure sensor feeds nothing anyway). */
export const deviceDailyPlan = (d: DeviceWorld) => ({
  title: 'Meters daily',
  selection: {
    subject: 'devices',
    operator: 'and',
    conditions: [
      { field: 'type', value: d.pressureSensor, not: true },
      { field: 'hierarchy', value: 'Meter B1' },
    ],
    states: ['volumeFlow'],
  },
  range: { from: '2026-10-24T00:00', to: '2026-10-27T00:00' },
  timeZone: 'Europe/Berlin',
  shape: { ...PLAIN_SHAPE, average: 'day' },
  format: STANDARD,
});

const MB1 = ['m-b1', 'Meter B1'];
const MN1 = ['m-n1', 'Meter N1'];

/** The rows each device plan must write, computed from the seed alone. */
export function expectedDeviceRows(world: ExportWorld, plan: 'points' | 'cluster' | 'daily'): string[][] {
  if (plan === 'points') {
    const [from, to] = [Date.parse('2026-10-24T22:00:00Z'), Date.parse('2026-10-25T23:00:00Z')];
    const points = [
      ...world.berlinFlow.map((p) => ({
        time: p.time,
        key: 'volumeFlow',
        unit: 'm³/h',
        cell: comma(p.value),
      })),
      ...world.berlinStatus.map((p) => ({ time: p.time, key: 'status', unit: '', cell: escaped(p.text) })),
    ]
      .filter((p) => p.time >= from && p.time < to)
      // Keys in code-point order, as the engine orders states when the plan names none.
      .sort((a, b) => a.time - b.time || (a.key < b.key ? -1 : 1));
    return [
      ['time', 'Gerät', 'title', 'latitude', 'longitude', 'Los', 'city', 'state', 'unit', 'value'],
      ...points.map((p) => [
        wallClock(p.time, 'Europe/Berlin'),
        ...MB1,
        '52,5',
        '13,4',
        '7',
        'Berlin',
        p.key,
        p.unit,
        p.cell,
      ]),
    ];
  }
  if (plan === 'cluster') {
    const end = Date.parse('2026-11-01T04:00:00Z');
    const status = new Map(world.berlinStatus.map((s) => [s.time, escaped(s.text)]));
    return [
      ['time', 'device', 'title', 'volumeFlow', 'status'],
      ...world.berlinFlow.map((p) => [
        wallClock(p.time, 'America/New_York'),
        ...MB1,
        String(p.value),
        status.get(p.time) ?? '',
      ]),
      ...world.nyFlow
        .filter((p) => p.time < end)
        .map((p) => [wallClock(p.time, 'America/New_York'), ...MN1, String(p.value), '']),
    ];
  }
  const days = [
    '2026-10-23T22:00:00Z',
    '2026-10-24T22:00:00Z',
    '2026-10-25T23:00:00Z',
    '2026-10-26T23:00:00Z',
  ];
  const bounds = days.map((d) => Date.parse(d));
  const rows = [['time', 'device', 'title', 'state', 'unit', 'value']];
  for (let d = 0; d < 3; d++) {
    const values = world.berlinFlow
      .filter((p) => p.time >= bounds[d]! && p.time < bounds[d + 1]!)
      .map((p) => p.value);
    if (values.length === 0) continue;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    rows.push([wallClock(bounds[d]!, 'Europe/Berlin'), ...MB1, 'volumeFlow', 'm³/h', String(mean)]);
  }
  return rows;
}
