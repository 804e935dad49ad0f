import { Account } from '../../../server/src/accounts/account.entity.js';
import { Connector } from '../../../server/src/connectors/connector.entity.js';
import { VirtualDevice } from '../../../server/src/devices/virtual-device.entity.js';
import { DeviceDriver, type ParserConfig } from '../../../server/src/drivers/device-driver.entity.js';
import { PACKET_STATUS_SQL } from '../../../server/src/ingest/commit-batch.stage.js';
import type { IncomingPacket } from '../../../server/src/ingest/ingest.types.js';
import { sleep } from './server-process.js';
import type { TestApp } from './test-app.js';

/** Rows for the ingest tests, written through the ORM so they do not depend on other domains' routes. */

export async function insertConnector(t: TestApp, accountId = t.rootAccountId, type = 'mqtt-broker') {
  const em = t.orm.em.fork();
  const connector = em.create(Connector, {
    account: em.getReference(Account, accountId),
    title: `connector ${Math.random().toString(36).slice(2, 8)}`,
    type,
  } as Connector);
  await em.flush();
  return connector.id;
}

export async function insertDriver(
  t: TestApp,
  parser: ParserConfig = { type: 'json' },
  accountId = t.rootAccountId,
) {
  const em = t.orm.em.fork();
  const driver = em.create(DeviceDriver, {
    account: em.getReference(Account, accountId),
    title: 'driver',
    parser,
  } as DeviceDriver);
  await em.flush();
  return driver.id;
}

export async function insertDevice(
  t: TestApp,
  o: {
    connectorId: string | null;
    deviceKey: string;
    driverId?: string | null;
    accountId?: string;
    title?: string;
  },
): Promise<string> {
  const em = t.orm.em.fork();
  const device = em.create(VirtualDevice, {
    account: em.getReference(Account, o.accountId ?? t.rootAccountId),
    connector: o.connectorId ? em.getReference(Connector, o.connectorId) : null,
    driver: o.driverId ? em.getReference(DeviceDriver, o.driverId) : null,
    deviceId: o.deviceKey,
    title: o.title ?? o.deviceKey,
  } as VirtualDevice);
  await em.flush();
  return device.id;
}

export const packet = (connectorId: string, deviceKey: string, payload: unknown): IncomingPacket => ({
  connectorId,
  deviceKey,
  payload: Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload)),
  source: 'test',
  receivedAt: new Date(),
});

export const sql = <T>(t: TestApp, query: string, params: unknown[] = []) =>
  t.orm.em.fork().getConnection().execute<T[]>(query, params);

/** Waits until every packet of the connector has a status (null and at most the cursor: parsed); returns them in id order. */
export async function processedPackets(t: TestApp, connectorId: string, count: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await sql<{
      id: string;
      status: string | null;
      error: string | null;
      device_uuid: string | null;
    }>(
      t,
      `SELECT id, ${PACKET_STATUS_SQL} AS status, error, device_uuid FROM packets p WHERE connector_id = ? ORDER BY id`,
      [connectorId],
    );
    if (rows.length >= count && rows.every((r) => r.status !== null)) return rows;
    if (Date.now() > deadline)
      throw new Error(`packets not processed in time: ${JSON.stringify(rows.slice(0, 5))} (${rows.length})`);
    await sleep(25);
  }
}

export async function statesOf(t: TestApp, deviceId: string): Promise<Record<string, unknown>> {
  const rows = await sql<{ key: string; value: unknown }>(
    t,
    'SELECT key, value FROM device_states WHERE device_id = ?',
    [deviceId],
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}
