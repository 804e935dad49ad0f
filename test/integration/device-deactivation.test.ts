import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createBrokerConnector,
  runMosquitto,
  startBrokerApp,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { insertDriver, processedPackets, statesOf } from './support/ingest-fixtures.js';
import { insertDevice } from './support/twin-fixtures.js';

/** A deactivated device: its packets stay in the history, unprocessed and not counted as failed. */
let t: BrokerTestApp;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await startBrokerApp();
  call = caller(t, bearer(await login(t)));
});
afterAll(() => t?.closeAll());

const publish = async (c: BrokerCredentials, body: unknown) => {
  const run = await runMosquitto('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', c.username, '-P', c.password],
    ...['-V', 'mqttv311', '-q', '1', '-t', upTopic(c, 'meter-1'), '-m', JSON.stringify(body)],
  ]);
  expect(run.code, run.stderr).toBe(0);
};

describe('device deactivation', () => {
  it('keeps the packets of a deactivated device unprocessed, and processes them again once reactivated', async () => {
    const c = await createBrokerConnector(t);
    const driverId = await insertDriver(t);
    const deviceId = await insertDevice(t, driverId, c.connectorId, 'meter-1', null);
    const put = async (active: boolean) =>
      expectStatus<{ active: boolean }>(
        await call('PUT', `/xapi/v1/virtual-devices/${deviceId}`, { active }),
        200,
      );

    expect(await put(false)).toMatchObject({ active: false });
    await publish(c, { level: 1 });
    const [kept] = await processedPackets(t, c.connectorId, 1);
    expect(kept).toMatchObject({ status: 'device-inactive', error: null, device_uuid: deviceId });
    expect(await statesOf(t, deviceId)).toEqual({});

    expect(await put(true)).toMatchObject({ active: true });
    await publish(c, { level: 2 });
    const rows = await processedPackets(t, c.connectorId, 2);
    expect(rows.map((r) => r.status)).toEqual(['device-inactive', 'parsed']);
    expect(await statesOf(t, deviceId)).toMatchObject({ level: 2 });
    const connector = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ logs: string }>>(
        'SELECT count(*) AS logs FROM connector_logs WHERE connector_id = ?',
        [c.connectorId],
      );
    // Deactivated on purpose: no "could not be processed" notice in the connector's log.
    expect(Number(connector[0]!.logs)).toBe(0);
  });
});
