import { Account } from '../../../server/src/accounts/account.entity.js';
import { Connector } from '../../../server/src/connectors/connector.entity.js';
import { VirtualDevice } from '../../../server/src/devices/virtual-device.entity.js';
import { caller, expectStatus, type Credentials } from './identity.js';
import type { TestApp } from './test-app.js';

/** Helpers shared by the connector, webhook, mqtt-in and hub tests. */

export interface ConnectorBody {
  id: string;
  accountId: string;
  type: string;
  title: string;
  active: boolean;
  capabilities: string[];
  apiEndpoint: string | null;
  brokerUsername: string | null;
  config: Record<string, unknown>;
  packetsIn: number;
  packetsFailed: number;
  lastPacketAt: string | null;
  creationDate: string;
  credentials?: { username?: string; password?: string; apiEndpoint?: string } | null;
}

export async function createConnector(
  t: TestApp,
  credentials: Credentials,
  body: Record<string, unknown>,
): Promise<ConnectorBody> {
  return expectStatus<ConnectorBody>(
    await caller(t, credentials)('POST', '/xapi/v1/connectors', {
      title: `c ${body.type as string}`,
      ...body,
    }),
    201,
  );
}

/** A device row written directly: the devices API is another domain's and not needed to test ingestion doors. */
export async function insertDevice(
  t: TestApp,
  fields: { accountId: string; connectorId: string | null; deviceId: string; title?: string },
): Promise<string> {
  return t.withContext(async () => {
    const em = t.ctx.em();
    const device = new VirtualDevice();
    device.account = em.getReference(Account, fields.accountId);
    device.connector = fields.connectorId ? em.getReference(Connector, fields.connectorId) : null;
    device.deviceId = fields.deviceId;
    device.title = fields.title ?? `device ${fields.deviceId}`;
    await em.persistAndFlush(device);
    return device.id;
  });
}

export interface PacketRow {
  id: string;
  device_key: string;
  payload: Buffer;
  source: string;
  status: string | null;
}

export function packetsOf(t: TestApp, connectorId: string): Promise<PacketRow[]> {
  return t.orm.em
    .fork()
    .getConnection()
    .execute<PacketRow[]>(
      'SELECT id, device_key, payload, source, status FROM packets WHERE connector_id = ? ORDER BY id',
      [connectorId],
    );
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
