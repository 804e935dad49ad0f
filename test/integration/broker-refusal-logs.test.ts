import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createBrokerConnector,
  runMosquitto,
  startBrokerApp,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { waitFor } from './support/wait.js';

/** What a site engineer reads in a connector's log when the broker turns its devices away. */
let t: BrokerTestApp;

beforeAll(async () => {
  t = await startBrokerApp({ env: { STELLWERK_MQTT_MAX_PACKET_BYTES: '2048' } });
});
afterAll(() => t?.closeAll());

const pub = (c: BrokerCredentials, version: string, topic: string, message: string) =>
  runMosquitto('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', c.username, '-P', c.password],
    ...['-V', version, '-q', '1', '-t', topic, '-m', message],
  ]);

type Log = { level: string; message: string; details: Record<string, unknown> };
const logs = (connectorId: string) =>
  t.orm.em
    .fork()
    .getConnection()
    .execute<Log[]>(
      'SELECT level, message, details FROM connector_logs WHERE connector_id = ? ORDER BY created_at',
      [connectorId],
    );
const logged = (connectorId: string, code: string) =>
  waitFor(async () => (await logs(connectorId)).filter((l) => l.details.code === code).at(0));

describe('broker refusals in the connector log', () => {
  it('logs a wrong password for a known username once per window', async () => {
    const c = await createBrokerConnector(t);
    for (let i = 0; i < 3; i++) {
      const run = await pub({ ...c, password: 'wrong' }, 'mqttv311', upTopic(c, 'd'), '{}');
      expect(run.code).not.toBe(0);
    }
    const entry = await logged(c.connectorId, 'BAD_CREDENTIALS');
    expect(entry).toMatchObject({ level: 'warn', message: 'Connection refused: wrong password' });
    expect(entry.details).toMatchObject({ username: c.username });
    expect(entry.details).not.toHaveProperty('password');
    // The two later refusals fall into the same window: counted, not written.
    expect((await logs(c.connectorId)).filter((l) => l.details.code === 'BAD_CREDENTIALS')).toHaveLength(1);
  });

  it('logs a publish to a topic outside the connector', async () => {
    const c = await createBrokerConnector(t);
    await pub(c, 'mqttv311', `connectors/${c.connectorId}/devices/d/elsewhere`, '{}');
    const entry = await logged(c.connectorId, 'TOPIC_NOT_ALLOWED');
    expect(entry.details).toMatchObject({ topic: `connectors/${c.connectorId}/devices/d/elsewhere` });
  });

  // MQTT 3.1.1 only: an MQTT 5 client learns the limit from CONNACK and does not send such a packet.
  it('logs a packet over the size limit', async () => {
    const c = await createBrokerConnector(t);
    const run = await pub(c, 'mqttv311', upTopic(c, 'd'), JSON.stringify({ blob: 'x'.repeat(3000) }));
    expect(run.code).not.toBe(0);
    const entry = await logged(c.connectorId, 'PACKET_TOO_LARGE');
    expect(entry).toMatchObject({ message: 'Connection closed: a packet larger than 2048 bytes' });
    expect(entry.details).toMatchObject({ limit: 2048 });
  });
});
