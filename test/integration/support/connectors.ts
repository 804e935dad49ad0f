import { caller, expectStatus, type Credentials } from './identity.js';
import type { TestApp } from './test-app.js';
import { waitFor } from './wait.js';

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

export interface PacketRow {
  id: string;
  device_key: string;
  payload: Buffer;
  source: string;
  status: string | null;
  /** Network-server metadata or the MQTT topic (ingest/packet-meta.ts). */
  meta: Record<string, unknown> | null;
}

/**
 * Front doors acknowledge once a packet is in the spool (ADR 0103); the ingest worker moves it into
 * `packets` right after. Reads of the table wait for that, bounded.
 */
export function packetsSettled(t: TestApp): Promise<true> {
  return waitFor(async () => (t.services.packets.backlog === 0 ? true : undefined), 20_000, {
    intervalMs: 10,
    what: 'every acknowledged packet in the packet table',
  });
}

export async function packetsOf(t: TestApp, connectorId: string): Promise<PacketRow[]> {
  await packetsSettled(t);
  return t.orm.em
    .fork()
    .getConnection()
    .execute<PacketRow[]>(
      'SELECT id, device_key, payload, source, status, meta FROM packets WHERE connector_id = ? ORDER BY id',
      [connectorId],
    );
}
