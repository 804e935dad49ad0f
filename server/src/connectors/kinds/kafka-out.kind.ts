import type { Kafka, Message, Producer, SASLOptions } from 'kafkajs';
import type { OutgoingMessage } from '../../integration/ports.js';
import {
  DeliveryError,
  encodeBody,
  type DeliveryContext,
  type OutgoingSender,
} from '../../outgoing/delivery.js';
import { couldNotConnect } from '../../outgoing/dial/connect-failure.js';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import type { Connector } from '../connector.entity.js';
import { Type } from 'typebox';
import { ConfigCheck, openSecret } from './config-fields.js';
import { deliveryFields, flag, integer, oneOf, secret, settingsObject, text } from './settings-fields.js';

/**
 * Kafka outgoing (kafkajs producer): each message becomes one record on `topic` (the message's,
 * else the connector's) with `key` (the message's, else the body field named by `keyField`), the
 * body as value (JSON unless a string) and the message headers. `acks`: -1 (all replicas,
 * default), 1 or 0. TLS (`ssl`, `serverCa`, client certificate and key, `rejectUnauthorized`)
 * and SASL (plain, scram-sha-256, scram-sha-512). kafkajs's own retries are off: the dispatcher
 * retries, so a broker outage fills the bounded queue instead of piling up inside kafkajs.
 * Every broker connection goes through DialOut (SSRF protection), the ones the cluster names too.
 */

const TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;
const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

export interface KafkaOutConfig {
  brokers: string[];
  topic: string;
  keyField?: string;
  acks?: -1 | 0 | 1;
  clientId?: string;
  ssl?: boolean;
  serverCa?: string;
  clientCert?: string;
  clientKey?: { sealed: string };
  rejectUnauthorized?: boolean;
  saslMechanism?: (typeof SASL_MECHANISMS)[number];
  saslUsername?: string;
  saslPassword?: { sealed: string };
  connectionTimeoutMs?: number;
}

export interface KafkaRecord {
  topic: string;
  acks: -1 | 0 | 1;
  messages: Message[];
}

/** The record kafkajs sends for one message (pure, so it is tested without a broker). */
export function buildKafkaRecord(message: OutgoingMessage, config: KafkaOutConfig): KafkaRecord {
  const topic = message.topic ?? config.topic;
  if (!TOPIC.test(topic))
    throw new DeliveryError(`"${topic}" is not a valid Kafka topic name`, false, 'BAD_TOPIC');
  const body = message.body;
  const fromField =
    config.keyField && body !== null && typeof body === 'object'
      ? (body as Record<string, unknown>)[config.keyField]
      : undefined;
  const key =
    message.key ??
    (fromField === undefined || fromField === null
      ? null
      : typeof fromField === 'string'
        ? fromField
        : JSON.stringify(fromField));
  const { text, contentType } = encodeBody(body);
  return {
    topic,
    acks: config.acks ?? -1,
    messages: [{ key, value: text, headers: { ...message.headers, 'content-type': contentType } }],
  };
}

/** Errors kafkajs reports that a later attempt can overcome; everything else is final. */
const RETRYABLE_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
]);

/** kafkajs's words for "the connection did not work", which a tenant is not told apart. */
const CONNECTION_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSTimeout',
]);

interface KafkaJsError {
  name?: string;
  message?: string;
  retriable?: boolean;
  type?: string;
  code?: unknown;
  cause?: unknown;
}

/** The error and the causes it wraps, outermost first. */
function chainOf(error: unknown): KafkaJsError[] {
  const chain: KafkaJsError[] = [];
  for (
    let e = error;
    e !== null && typeof e === 'object' && chain.length < 5;
    e = (e as KafkaJsError).cause
  ) {
    chain.push(e);
  }
  return chain;
}

/** Turns what kafkajs threw into a DeliveryError, retryable or final. */
export function kafkaDeliveryError(error: unknown): DeliveryError {
  if (error instanceof DeliveryError) return error;
  const chain = chainOf(error);
  // kafkajs rewraps socket errors, keeping their code: the guard's refusal shows as it is.
  const refused = chain.find((e) => e.code === 'OUTGOING_TARGET_REFUSED');
  if (refused) {
    return new DeliveryError(
      (refused.message ?? '').replace(/^Connection error: /, ''),
      false,
      'OUTGOING_TARGET_REFUSED',
    );
  }
  const root = chain.at(-1) ?? {};
  if (CONNECTION_NAMES.has(root.name ?? '')) {
    return new DeliveryError(couldNotConnect('the Kafka brokers'), true, 'CONNECT_FAILED');
  }
  const e = (error ?? {}) as KafkaJsError;
  const name = e.name ?? 'Error';
  const retryable = RETRYABLE_NAMES.has(name) || e.retriable === true;
  const code =
    e.type ??
    (name.startsWith('KafkaJS')
      ? name
          .slice('KafkaJS'.length)
          .replace(/Error$/, '')
          .toUpperCase()
      : 'KAFKA_ERROR');
  return new DeliveryError(
    `Kafka: ${e.message ?? String(error)}`,
    retryable,
    `KAFKA_${code}`.replace(/^KAFKA_KAFKA_/, 'KAFKA_'),
  );
}

/** Rules the settings schema cannot say: URL and address forms, PEM labels, settings that go together. */
function validate(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  const brokers = config.brokers;
  const listMessage = 'must be a list of 1 to 20 host:port entries';
  if (!Array.isArray(brokers)) check.problem('brokers', 'type', { type: 'array' }, listMessage);
  else if (brokers.length === 0) check.problem('brokers', 'minItems', { limit: 1 }, listMessage);
  else if (brokers.length > 20) check.problem('brokers', 'maxItems', { limit: 20 }, listMessage);
  else {
    brokers.forEach((b, i) => {
      if (typeof b !== 'string' || !/^[a-zA-Z0-9.\-[\]:]+:\d{1,5}$/.test(b))
        check.problem(`brokers/${i}`, 'format', { format: 'host-port' }, 'must be host:port');
    });
  }
  check.string('topic', { required: true, maxLength: 249 });
  if (typeof config.topic === 'string' && !TOPIC.test(config.topic))
    check.problem(
      'topic',
      'pattern',
      { pattern: TOPIC.source },
      'may hold letters, digits, ".", "_" and "-" only',
    );
  check.pem('serverCa', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientCert', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  if (config.saslMechanism !== undefined && typeof config.saslUsername !== 'string')
    check.problem(
      'saslUsername',
      'dependentRequired',
      { property: 'saslMechanism', missingProperty: 'saslUsername' },
      'is required with saslMechanism',
    );
  return check.problems;
}

/** The kafkajs client for a connector's settings, connecting through DialOut. */
export function kafkaClient(connector: Connector, ctx: DeliveryContext): Kafka {
  const config = connector.config as unknown as KafkaOutConfig;
  const key = openSecret(connector.config, 'clientKey', ctx);
  const tls = config.ssl || config.serverCa || config.clientCert;
  const sasl: SASLOptions | undefined = config.saslMechanism
    ? {
        mechanism: config.saslMechanism,
        username: config.saslUsername ?? '',
        password: openSecret(connector.config, 'saslPassword', ctx) ?? '',
      }
    : undefined;
  return ctx.dial.kafka({
    clientId: config.clientId || `stellwerk-${connector.id.slice(-12)}`,
    brokers: config.brokers,
    connectionTimeout: config.connectionTimeoutMs ?? 5000,
    requestTimeout: 15_000,
    retry: { retries: 0 },
    ...(tls
      ? {
          ssl: {
            rejectUnauthorized: config.rejectUnauthorized ?? true,
            ...(config.serverCa ? { ca: [config.serverCa] } : {}),
            ...(config.clientCert ? { cert: config.clientCert } : {}),
            ...(key ? { key } : {}),
          },
        }
      : {}),
    ...(sasl ? { sasl } : {}),
  });
}

function sender(ctx: DeliveryContext): OutgoingSender {
  const producers = new Map<string, Producer>();

  async function producerFor(connector: Connector): Promise<Producer> {
    const existing = producers.get(connector.id);
    if (existing) return existing;
    const producer = kafkaClient(connector, ctx).producer({
      allowAutoTopicCreation: false,
      retry: { retries: 0 },
    });
    await producer.connect();
    producers.set(connector.id, producer);
    return producer;
  }

  const release = async (connectorId: string) => {
    const producer = producers.get(connectorId);
    producers.delete(connectorId);
    if (producer) await producer.disconnect().catch(() => undefined);
  };

  return {
    async deliver(connector, message) {
      const record = buildKafkaRecord(message, connector.config as unknown as KafkaOutConfig);
      try {
        const producer = await producerFor(connector);
        await producer.send(record);
      } catch (error) {
        // A fresh connection for the next attempt: kafkajs may hold a half-broken one.
        await release(connector.id);
        const failure = kafkaDeliveryError(error);
        if (failure.code === 'CONNECT_FAILED') {
          ctx.dial.connectFailed(error, { connectorId: connector.id, brokers: connector.config.brokers });
        }
        throw failure;
      }
    },
    release,
    async close() {
      await Promise.all([...producers.keys()].map(release));
    },
  };
}

export const kafkaOutKind: ConnectorKindDescriptor = {
  type: 'kafka-out',
  direction: 'outgoing',
  summary: 'Produces each message as a record on a Kafka topic (acks, TLS, SASL plain/SCRAM).',
  capabilities: ['sends'],
  delivers: 'kafka',
  settings: settingsObject(
    {
      brokers: Type.Array(text(300), {
        minItems: 1,
        maxItems: 20,
        description: 'host:port of bootstrap brokers',
      }),
      topic: text(249),
      keyField: text(100, 'Body field used as the record key'),
      acks: oneOf([-1, 0, 1], '-1: all replicas (default)'),
      clientId: text(100),
      ssl: flag(),
      serverCa: text(20_000, 'PEM of the CA that signed the broker certificates'),
      clientCert: text(20_000, 'PEM client certificate (with clientKey)'),
      clientKey: secret(20_000, 'PEM private key of clientCert'),
      rejectUnauthorized: flag('false accepts self-signed or otherwise unverifiable broker certificates'),
      saslMechanism: oneOf(SASL_MECHANISMS),
      saslUsername: text(200),
      saslPassword: secret(500),
      connectionTimeoutMs: integer(100, 60_000),
      ...deliveryFields(),
    },
    ['brokers', 'topic'],
  ),
  check: validate,
  devices: PLAIN_DEVICES,
  runtime: ({ outgoing }) => ({ sender: sender(outgoing) }),
};
