import { Account } from '../../../server/src/accounts/account.entity.js';
import type { StateValueType } from '../../../server/src/states/data-state.entity.js';
import { DataState } from '../../../server/src/states/data-state.entity.js';
import type { StateSource } from '../../../server/src/states/state-source.js';
import type { TimeSeriesPoint } from '../../../server/src/timeseries/timeseries.types.js';
import { DigitalTwin } from '../../../server/src/twins/digital-twin.entity.js';
import { Connector } from '../../../server/src/connectors/connector.entity.js';
import { VirtualDevice } from '../../../server/src/devices/virtual-device.entity.js';
import { DeviceDriver } from '../../../server/src/drivers/device-driver.entity.js';
import { sql } from './ingest-fixtures.js';
import type { TestApp } from './test-app.js';

/** Twin and data state rows for the state engine tests, made through the ORM (not the twins/states API). */

/** A device with a driver and an optional referenceId (dynamic data routing). */
export async function insertDevice(
  t: TestApp,
  driverId: string,
  connectorId: string,
  deviceKey: string,
  referenceId: string | null,
  accountId = t.rootAccountId,
): Promise<string> {
  const em = t.orm.em.fork();
  const device = em.create(VirtualDevice, {
    account: em.getReference(Account, accountId),
    connector: em.getReference(Connector, connectorId),
    driver: em.getReference(DeviceDriver, driverId),
    deviceId: deviceKey,
    title: deviceKey,
    referenceId,
  } as VirtualDevice);
  await em.flush();
  return device.id;
}

export async function insertTwin(
  t: TestApp,
  o: { referenceId?: string | null; accountId?: string; title?: string } = {},
): Promise<string> {
  const em = t.orm.em.fork();
  const twin = new DigitalTwin();
  twin.account = em.getReference(Account, o.accountId ?? t.rootAccountId);
  twin.title = o.title ?? 'twin';
  twin.referenceId = o.referenceId ?? null;
  twin.path = [twin.id];
  await em.persistAndFlush(twin);
  return twin.id;
}

export async function insertState(
  t: TestApp,
  twinId: string,
  key: string,
  source: StateSource | null,
  o: { valueType?: StateValueType; accountId?: string } = {},
): Promise<string> {
  const em = t.orm.em.fork();
  const state = new DataState();
  state.account = em.getReference(Account, o.accountId ?? t.rootAccountId);
  state.twin = em.getReference(DigitalTwin, twinId);
  state.key = key;
  state.source = source;
  state.valueType = o.valueType ?? 'number';
  await em.persistAndFlush(state);
  return state.id;
}

export interface StateValueRow {
  id: string;
  key: string;
  value: unknown;
  timestamp: Date | null;
  warning: string | null;
  engine: Record<string, unknown>;
}

export async function stateRows(t: TestApp, twinId: string): Promise<Record<string, StateValueRow>> {
  // The ORM's connection returns timestamptz as text: read it as ISO JSON and make a Date.
  const rows = await sql<Omit<StateValueRow, 'timestamp'> & { timestamp: string | null }>(
    t,
    `SELECT id, key, value, to_json(timestamp) #>> '{}' AS timestamp, warning, engine
       FROM data_states WHERE twin_id = ?`,
    [twinId],
  );
  return Object.fromEntries(
    rows.map((r) => [r.key, { ...r, timestamp: r.timestamp === null ? null : new Date(r.timestamp) }]),
  );
}

/** Every point in `ts_points` (the default target, written with the state), oldest first. */
export async function storedPoints(t: TestApp): Promise<TimeSeriesPoint[]> {
  const rows = await sql<{
    state_id: string;
    twin_id: string;
    account_id: string;
    key: string;
    ms: number;
    value: number | null;
    text: string | null;
  }>(
    t,
    // ctid: rows of one time keep the order they were inserted in (one partition, no updates).
    `SELECT p.state_id, s.twin_id, s.account_id, s.key, p.value, p.text,
            (extract(epoch FROM p."time") * 1000)::float8 AS ms
       FROM ts_points p JOIN data_states s ON s.id = p.state_id ORDER BY p."time", p.ctid`,
  );
  return rows.map((r) => ({
    stateId: r.state_id,
    twinId: r.twin_id,
    accountId: r.account_id,
    stateKey: r.key,
    time: new Date(Number(r.ms)),
    value: r.value,
    text: r.text,
  }));
}

/** Point values per state key (numbers, else text), in order. */
export function pointsByKey(points: TimeSeriesPoint[], twinId?: string): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const p of points)
    if (!twinId || p.twinId === twinId) (out[p.stateKey] ??= []).push(p.value ?? p.text);
  return out;
}
