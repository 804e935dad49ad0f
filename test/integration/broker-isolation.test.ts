import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  inbox,
  downTopic,
  startTwoTenantBroker,
  storedPackets,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
  type TwoTenantBroker,
} from './support/broker.js';
import { waitFor } from './support/wait.js';

/**
 * A client of tenant B cannot subscribe to, publish into, or set a will on tenant A's
 * topics, and cannot subscribe to `#` or `$SYS/#`. Checked with mqtt.js over MQTT 3.1.1 and 5. Client
 * ids (same id in two tenants) are broker-client-ids.test.ts.
 */

let world: TwoTenantBroker;
let t: BrokerTestApp;
let A: BrokerCredentials;
let B: BrokerCredentials;

beforeAll(async () => {
  world = await startTwoTenantBroker();
  ({ t, A, B } = world);
});
afterAll(() => world?.close());

const url = () => world.url;
const client = (c: BrokerCredentials, options: Parameters<TwoTenantBroker['client']>[1] = {}) =>
  world.client(c, options);

const closedSoon = (c: MqttClient) => new Promise<void>((resolve) => c.once('close', () => resolve()));

describe.each([4, 5] as const)('MQTT %s', (protocolVersion) => {
  // mqtt.js rejects a refused filter: SUBACK 0x80 in 3.1.1, reason 0x87 "not authorized" in 5.
  const refused = protocolVersion === 5 ? /Not authorized/ : /Unspecified error/;

  it("refuses B's subscriptions to A's topics, #, $SYS/# and wildcard connectors", async () => {
    const b = await client(B, { protocolVersion });
    const filters = [
      downTopic(A, '+'),
      downTopic(A, 'meter-1'),
      upTopic(A, 'meter-1'),
      '#',
      '$SYS/#',
      '+/#',
      'connectors/+/devices/+/down',
      `connectors/${A.connectorId}/#`,
      upTopic(B, '+'),
    ];
    for (const topic of filters)
      await expect(b.subscribeAsync(topic, { qos: 1 }), topic).rejects.toThrow(refused);
    // Its own downlinks are allowed.
    const own = await b.subscribeAsync(downTopic(B, '+'), { qos: 1 });
    expect(own.map((g) => g.qos)).toEqual([1]);
  });

  it("delivers A's downlinks to A only, and no client's uplinks to anyone", async () => {
    const a = await client(A, { protocolVersion });
    const b = await client(B, { protocolVersion });
    const aInbox = inbox(a);
    const bInbox = inbox(b);
    await a.subscribeAsync(downTopic(A, '+'), { qos: 1 });
    await b.subscribeAsync(downTopic(B, '+'), { qos: 1 });
    await expect(b.subscribeAsync(['#', downTopic(A, '+')], { qos: 1 })).rejects.toThrow(refused);
    await a.publishAsync(upTopic(A, 'meter-1'), '{"a":1}', { qos: 1 });
    await t.services.broker.publishDownlink(A.connectorId, 'meter-1', Buffer.from('for A'));
    await waitFor(async () => (aInbox.length ? true : undefined));
    await new Promise((r) => setTimeout(r, 100));
    expect(aInbox).toEqual([[downTopic(A, 'meter-1'), 'for A']]);
    expect(bInbox).toEqual([]);
  });

  it("refuses B's publishes into A's up and down topics and stores nothing for A", async () => {
    const before = (await storedPackets(t, A.connectorId)).length;
    const a = await client(A, { protocolVersion });
    const aInbox = inbox(a);
    await a.subscribeAsync(downTopic(A, '+'), { qos: 1 });
    for (const topic of [upTopic(A, 'meter-1'), downTopic(A, 'meter-1'), '$SYS/x', 'anything']) {
      const b = await client(B, { protocolVersion });
      if (protocolVersion === 5) {
        // MQTT 5: a PUBACK with reason 0x87 (not authorized); the connection stays.
        await expect(b.publishAsync(topic, 'injected', { qos: 1 })).rejects.toThrow(/Not authorized|135/i);
        expect(b.connected).toBe(true);
      } else {
        // MQTT 3.1.1 has no negative PUBACK: the broker closes the connection without acknowledging.
        const closed = closedSoon(b);
        b.publish(topic, 'injected', { qos: 1 });
        await closed;
      }
      b.end(true);
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await storedPackets(t, A.connectorId)).length).toBe(before);
    expect(aInbox).toEqual([]);
  });

  it("refuses a will on A's topics (or on B's own downlinks) at CONNECT", async () => {
    for (const topic of [
      upTopic(A, 'meter-1'),
      downTopic(A, 'meter-1'),
      downTopic(B, 'x'),
      '$SYS/will',
      '#',
    ]) {
      await expect(
        connectClient(url(), B, {
          protocolVersion,
          will: { topic, payload: Buffer.from('bye'), qos: 1, retain: false },
        }),
      ).rejects.toThrow(/Not authorized/i);
    }
  });

  it('publishes an allowed will (own up topic) into the packet store when the client drops', async () => {
    const device = `will-${protocolVersion}`;
    const b = await client(B, {
      protocolVersion,
      will: { topic: upTopic(B, device), payload: Buffer.from('{"online":false}'), qos: 1, retain: true },
    });
    b.stream.destroy();
    const rows = await waitFor(async () => {
      const r = (await storedPackets(t, B.connectorId)).filter((p) => p.device_key === device);
      return r.length ? r : undefined;
    });
    expect(rows.map((r) => r.payload.toString())).toEqual(['{"online":false}']);
  });
});
