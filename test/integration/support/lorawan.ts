import { readFileSync } from 'node:fs';
import type { IncomingPacket } from '../../../server/src/ingest/ingest.types.js';
import type { DownlinkEvent, GatewayStatusEvent } from '../../../server/src/connectors/network-events.js';
import { caller, expectStatus, type Credentials } from './identity.js';
import type { TestApp } from './test-app.js';

/** Network-server documentation examples (test/fixtures/lorawan/, provenance.json there). */
export const lorawanFixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/lorawan/${name}.json`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;

/** A TS013 codec that shows which bytes reached the driver. */
export const BYTES_CODEC = `function decodeUplink(input) {
  return { data: { size: input.bytes.length, first: input.bytes[0] } };
}`;

/**
 * What the front doors handed to the packet store, with the metadata they read: the packet table
 * keeps the metadata once the ingest path carries it; here the tests read it where it is made.
 */
export function tapPackets(t: TestApp): IncomingPacket[] {
  const appended: IncomingPacket[] = [];
  const sink = t.services.packets;
  const append = sink.append.bind(sink);
  sink.append = (packet) => {
    appended.push(packet);
    return append(packet);
  };
  return appended;
}

/** Downlink and gateway events the kinds emitted, as the downlink queue and gateways receive them. */
export function tapNetworkEvents(t: TestApp): { downlinks: DownlinkEvent[]; gateways: GatewayStatusEvent[] } {
  const taps = { downlinks: [] as DownlinkEvent[], gateways: [] as GatewayStatusEvent[] };
  t.services.networkEvents.onDownlink((e) => void taps.downlinks.push(e));
  t.services.networkEvents.onGateway((e) => void taps.gateways.push(e));
  return taps;
}

export async function codecDriver(t: TestApp, admin: Credentials): Promise<string> {
  const driver = expectStatus<{ id: string }>(
    await caller(t, admin)('POST', '/xapi/v1/device-drivers', {
      title: `bytes ${Math.random().toString(36).slice(2, 8)}`,
      parser: { type: 'javascript', code: BYTES_CODEC },
    }),
    201,
  );
  return driver.id;
}

/** A device made through the API, as a user would: the EUI as the network server shows it. */
export async function lorawanDevice(
  t: TestApp,
  admin: Credentials,
  o: { connectorId: string; deviceId: string; driverId?: string },
): Promise<{ id: string; device_id: string }> {
  return expectStatus<{ id: string; device_id: string }>(
    await caller(t, admin)('POST', '/xapi/v1/virtual-devices', {
      device_id: o.deviceId,
      title: `LoRaWAN ${o.deviceId}`,
      connectorId: o.connectorId,
      ...(o.driverId ? { deviceDriverId: o.driverId } : {}),
    }),
    201,
  );
}
