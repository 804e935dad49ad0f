import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DialOut } from '../../outgoing/dial/dial-out.js';
import { DeliveryError } from '../../outgoing/delivery.js';
import { TargetGuard } from '../../outgoing/target-guard.js';
import { SecretBox } from '../../platform/crypto/secret-box.js';
import { Connector } from '../connector.entity.js';
import { buildKind } from './derive.js';
import { buildKafkaRecord, kafkaDeliveryError, kafkaOutKind, type KafkaOutConfig } from './kafka-out.kind.js';

const noRuntime = { start: async () => {}, stop: async () => {}, publish: async () => {} };

/**
 * No Kafka broker can run on these machines: message building, settings and error handling are
 * tested here without one; the delivery test talks to a closed port and to a TCP server that
 * accepts and hangs up, which is what a dead or wrong broker looks like to kafkajs.
 */

const config: KafkaOutConfig = { brokers: ['kafka-1:9092'], topic: 'plant.alerts', keyField: 'device' };
const secretBox = new SecretBox(randomBytes(32));
const log = pino({ enabled: false });
const ctx = { secretBox, dial: new DialOut(new TargetGuard(['127.0.0.0/8']), log), log };

describe('kafka-out record building', () => {
  it('JSON-encodes the body, takes the key from the body field, adds headers and acks', () => {
    expect(
      buildKafkaRecord({ body: { device: 'boiler-1', t: 21 }, headers: { 'x-origin': 'rule' } }, config),
    ).toEqual({
      topic: 'plant.alerts',
      acks: -1,
      messages: [
        {
          key: 'boiler-1',
          value: '{"device":"boiler-1","t":21}',
          headers: { 'x-origin': 'rule', 'content-type': 'application/json' },
        },
      ],
    });
  });

  it('lets the message choose topic and key; strings go as they are; no key without one', () => {
    const record = buildKafkaRecord(
      { body: 'plain', topic: 'other_topic', key: 'k1' },
      { ...config, acks: 1 },
    );
    expect(record).toMatchObject({
      topic: 'other_topic',
      acks: 1,
      messages: [{ key: 'k1', value: 'plain' }],
    });
    expect(buildKafkaRecord({ body: { other: 1 } }, config).messages[0]!.key).toBeNull();
    expect(buildKafkaRecord({ body: { device: 7 } }, config).messages[0]!.key).toBe('7');
  });

  it('refuses an invalid topic as a final error', () => {
    expect(() => buildKafkaRecord({ body: 1, topic: 'bad topic!' }, config)).toThrow(DeliveryError);
    try {
      buildKafkaRecord({ body: 1, topic: 'bad topic!' }, config);
    } catch (error) {
      expect(error).toMatchObject({ retryable: false, code: 'BAD_TOPIC' });
    }
  });
});

describe('kafka-out error handling', () => {
  it('classifies kafkajs errors: connection problems are retried, protocol and auth errors are final', () => {
    const named = (name: string, extra: Record<string, unknown> = {}) =>
      Object.assign(new Error(`${name} happened`), { name, ...extra });
    expect(kafkaDeliveryError(named('KafkaJSConnectionError'))).toMatchObject({
      retryable: true,
      code: 'CONNECT_FAILED',
    });
    expect(kafkaDeliveryError(named('KafkaJSNumberOfRetriesExceeded'))).toMatchObject({ retryable: true });
    expect(kafkaDeliveryError(named('KafkaJSRequestTimeoutError'))).toMatchObject({ retryable: true });
    expect(
      kafkaDeliveryError(
        named('KafkaJSProtocolError', { type: 'TOPIC_AUTHORIZATION_FAILED', retriable: false }),
      ),
    ).toMatchObject({
      retryable: false,
      code: 'KAFKA_TOPIC_AUTHORIZATION_FAILED',
    });
    expect(
      kafkaDeliveryError(named('KafkaJSProtocolError', { type: 'LEADER_NOT_AVAILABLE', retriable: true })),
    ).toMatchObject({ retryable: true });
    expect(kafkaDeliveryError(named('KafkaJSSASLAuthenticationError'))).toMatchObject({ retryable: false });
    // A protocol error the retrier gave up on is still the broker's answer.
    const protocol = named('KafkaJSProtocolError', { type: 'LEADER_NOT_AVAILABLE', retriable: true });
    expect(kafkaDeliveryError(named('KafkaJSNumberOfRetriesExceeded', { cause: protocol }))).toMatchObject({
      code: 'KAFKA_NUMBEROFRETRIESEXCEEDED',
    });
    expect(kafkaDeliveryError(new Error('boom')).message).toBe('Kafka: boom');
  });

  it('validates settings', () => {
    const kind = buildKind(kafkaOutKind, {
      mqttIn: noRuntime,
      broker: { publishDownlink: async () => {} },
      links: { register: () => {}, start: async () => {}, stop: async () => {}, session: () => undefined },
      outgoing: ctx,
    });
    expect(kind.validate({ brokers: ['k:9092'], topic: 't' })).toEqual([]);
    expect(kind.validate({ brokers: [], topic: 't' }).map((p) => p.path)).toEqual(['/config/brokers']);
    expect(
      kind
        .validate({ brokers: ['no-port'], topic: 'a b', acks: 2, saslMechanism: 'gssapi' })
        .map((p) => p.path),
    ).toEqual([
      '/config/brokers/0',
      '/config/topic',
      '/config/acks',
      '/config/saslMechanism',
      '/config/saslUsername',
    ]);
    const sealed = kind.prepareConfig!({ brokers: ['k:9092'], topic: 't', saslPassword: 'pw' }, undefined, {
      secretBox,
    });
    expect(sealed.saslPassword).toEqual({ sealed: expect.any(String) as string });
    expect(kind.publicConfig!(sealed).saslPassword).toBe('********');
  });

  async function deliverTo(brokers: string[], dial = ctx.dial) {
    const kind = buildKind(kafkaOutKind, {
      mqttIn: noRuntime,
      broker: { publishDownlink: async () => {} },
      links: { register: () => {}, start: async () => {}, stop: async () => {}, session: () => undefined },
      outgoing: { ...ctx, dial },
    });
    const connector = new Connector();
    connector.type = 'kafka-out';
    connector.config = { brokers, topic: 'plant.alerts', connectionTimeoutMs: 500 };
    try {
      await kind.sender!.deliver(connector, { body: { a: 1 } }, { messageId: 'm1', attempt: 1 });
      return undefined;
    } catch (error) {
      return error as DeliveryError;
    } finally {
      await kind.sender!.close();
    }
  }

  it('turns a broker it cannot reach into one retryable DeliveryError, whatever the network did', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const peers: net.Socket[] = [];
    const listen = async (onConnection: (socket: net.Socket) => void) => {
      const server = net.createServer((socket) => {
        peers.push(socket.on('error', () => undefined));
        onConnection(socket);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    };
    const hangsUp = await listen((socket) => socket.destroy());
    const notKafka = await listen((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;
    try {
      const errors = await Promise.all(
        [closedPort, portOf(hangsUp), portOf(notKafka)].map((port) => deliverTo([`127.0.0.1:${port}`])),
      );
      for (const error of errors) {
        expect(error).toBeInstanceOf(DeliveryError);
        expect(error).toMatchObject({ retryable: true, code: 'CONNECT_FAILED', message: errors[0]!.message });
      }
      expect(errors[0]!.message).not.toMatch(/ECONN|closed|timeout|127\.0\.0\.1/i);
    } finally {
      for (const socket of peers) socket.destroy();
      await Promise.all([hangsUp, notKafka].map((server) => new Promise((resolve) => server.close(resolve))));
    }
  }, 20_000);

  it('refuses a private broker address without the administrator allowing it (final)', async () => {
    const error = await deliverTo(['10.9.8.7:9092'], new DialOut(new TargetGuard([]), log));
    expect(error).toMatchObject({ retryable: false, code: 'OUTGOING_TARGET_REFUSED' });
  });
});
