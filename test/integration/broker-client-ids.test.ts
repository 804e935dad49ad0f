import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  inbox,
  downTopic,
  runMosquitto,
  startTwoTenantBroker,
  storedPackets,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
  type TwoTenantBroker,
} from './support/broker.js';
import { waitFor } from './support/wait.js';

/**
 * Client ids are per connector: devices of two tenants that happen to use the same client id connect
 * side by side and neither can end, replace or resume the other's session (live connection,
 * persistent session, queued QoS 1 downlinks, will). Within one connector the MQTT rule holds: a second
 * connection with the same id replaces the first. Checked with mqtt.js over MQTT 3.1.1 and 5 and with
 * mosquitto_pub/mosquitto_sub.
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

const client = (c: BrokerCredentials, options: Parameters<TwoTenantBroker['client']>[1] = {}) =>
  world.client(c, options);

const payloadsOf = async (c: BrokerCredentials, device: string) =>
  (await storedPackets(t, c.connectorId))
    .filter((p) => p.device_key === device)
    .map((p) => p.payload.toString());

describe.each([4, 5] as const)('MQTT %s', (protocolVersion) => {
  it('lets devices of two tenants with the same client id connect at once and both keep publishing', async () => {
    const clientId = `gateway-${protocolVersion}`;
    const device = `same-id-${protocolVersion}`;
    const a = await client(A, {
      protocolVersion,
      clientId,
      clean: false,
      will: { topic: upTopic(A, device), payload: Buffer.from('"A gone"'), qos: 1, retain: false },
    });
    const b = await client(B, { protocolVersion, clientId, clean: false });
    for (let i = 0; i < 5; i++) {
      await a.publishAsync(upTopic(A, device), `{"a":${i}}`, { qos: 1 });
      await b.publishAsync(upTopic(B, device), `{"b":${i}}`, { qos: 1 });
    }
    expect([a.connected, b.connected]).toEqual([true, true]);
    // The QoS 1 PUBACKs came after the commits: every packet is stored under its own connector.
    expect(await payloadsOf(A, device)).toEqual([0, 1, 2, 3, 4].map((i) => `{"a":${i}}`));
    expect(await payloadsOf(B, device)).toEqual([0, 1, 2, 3, 4].map((i) => `{"b":${i}}`));
    // B's connection did not end A's: A's will was not published, A still gets its downlinks.
    const aInbox = inbox(a);
    await a.subscribeAsync(downTopic(A, '+'), { qos: 1 });
    await t.services.broker.publishDownlink(A.connectorId, device, Buffer.from('to A'));
    await waitFor(async () => (aInbox.length ? true : undefined));
    expect(aInbox).toEqual([[downTopic(A, device), 'to A']]);
    expect(await payloadsOf(A, device)).not.toContain('"A gone"');
    await a.endAsync();
    await b.endAsync();
  });

  it("keeps persistent sessions apart: B's session with A's client id never sees A's queued downlinks", async () => {
    const clientId = `persistent-${protocolVersion}`;
    const a = await client(A, { protocolVersion, clientId, clean: false });
    await a.subscribeAsync(downTopic(A, '+'), { qos: 1 });
    await a.endAsync();

    const b = await client(B, { protocolVersion, clientId, clean: false });
    // A session of its own: nothing of A's subscriptions came along.
    expect(b.connected).toBe(true);
    const bInbox = inbox(b);
    await t.services.broker.publishDownlink(A.connectorId, 'm', Buffer.from('queued for A'));
    await new Promise((r) => setTimeout(r, 150));
    expect(bInbox).toEqual([]);

    // A comes back (B still connected) to its own session and gets what was queued for it.
    const again = await client(A, { protocolVersion, clientId, clean: false });
    const againInbox = inbox(again);
    await waitFor(async () => (againInbox.length ? true : undefined));
    expect(againInbox).toEqual([[downTopic(A, 'm'), 'queued for A']]);
    expect(b.connected).toBe(true);
    await again.endAsync();
    await b.endAsync();
  });

  it('within one connector, a second connection with the same client id replaces the first', async () => {
    const clientId = `takeover-${protocolVersion}`;
    const device = `takeover-${protocolVersion}`;
    const first = await client(A, { protocolVersion, clientId });
    const other = await client(B, { protocolVersion, clientId });
    const firstClosed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    const second = await client(A, { protocolVersion, clientId });
    await firstClosed;
    await second.publishAsync(upTopic(A, device), '{"second":true}', { qos: 1 });
    expect(await payloadsOf(A, device)).toEqual(['{"second":true}']);
    // The other tenant's connection with that id was not touched.
    expect(other.connected).toBe(true);
    await other.publishAsync(upTopic(B, device), '{"other":true}', { qos: 1 });
    expect(await payloadsOf(B, device)).toEqual(['{"other":true}']);
    await second.endAsync();
    await other.endAsync();
  });
});

it('mosquitto_sub of tenant A keeps its client id while mosquitto_pub of tenant B publishes with it', async () => {
  const clientId = 'field-gateway';
  const common = ['-h', '127.0.0.1', '-p', String(t.mqttPort), '-i', clientId, '-q', '1'];
  // A's subscriber holds the id and waits for one downlink.
  const sub = runMosquitto('mosquitto_sub', [
    ...common,
    '-u',
    A.username,
    '-P',
    A.password,
    '-t',
    downTopic(A, '+'),
    '-C',
    '1',
  ]);
  await waitFor(async () => (t.services.broker.clientCount(A.connectorId) > 0 ? true : undefined));
  const pub = await runMosquitto('mosquitto_pub', [
    ...common,
    '-u',
    B.username,
    '-P',
    B.password,
    '-t',
    upTopic(B, 'field-1'),
    '-m',
    '{"from":"B"}',
  ]);
  expect(pub.stderr).toBe('');
  expect(pub.code).toBe(0);
  expect(await payloadsOf(B, 'field-1')).toEqual(['{"from":"B"}']);
  await t.services.broker.publishDownlink(A.connectorId, 'field-1', Buffer.from('still here'));
  const received = await sub;
  expect({ code: received.code, stdout: received.stdout.trim() }).toEqual({ code: 0, stdout: 'still here' });
});
