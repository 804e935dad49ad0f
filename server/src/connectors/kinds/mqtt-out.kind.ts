import type { IClientOptions, MqttClient } from 'mqtt';
import {
  connectionFailed,
  DeliveryError,
  encodeBody,
  type DeliveryContext,
  type OutgoingSender,
} from '../../outgoing/delivery.js';
import { refusalOf } from '../../outgoing/dial/connect-failure.js';
import type { TargetRefusedError } from '../../outgoing/target-guard.js';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import type { Connector } from '../connector.entity.js';
import { ConfigCheck, openSecret } from './config-fields.js';
import { deliveryFields, flag, oneOf, secret, settingsObject, text, tlsFields } from './settings-fields.js';

/**
 * MQTT outgoing: publishes each message to an external broker with the configured QoS (0, 1, 2)
 * and `retain`, on `topic` (the message's own topic, else the connector's), a template whose
 * `{{name}}` placeholders take the message body's fields (`stellwerk/{{deviceId}}/out`).
 * Username/password or TLS with server CA, client certificate and key; `rejectUnauthorized: false`
 * accepts self-signed broker certificates. One client per connector, kept open and reconnecting
 * through DialOut (SSRF protection at every connect);
 * while the broker is away a delivery fails (retryable) and the dispatcher's bounded queue fills up
 * until its overflow policy (`drop-newest` or `drop-oldest`, `queueSize`) drops messages.
 */

const CONNECT_WAIT_MS = 2000;
const PUBLISH_TIMEOUT_MS = 10_000;

export interface MqttOutConfig {
  url: string;
  topic: string;
  qos?: 0 | 1 | 2;
  retain?: boolean;
  protocolVersion?: 4 | 5;
  clientId?: string;
  username?: string;
  password?: { sealed: string };
  serverCa?: string;
  clientCert?: string;
  clientKey?: { sealed: string };
  rejectUnauthorized?: boolean;
}

const validTopicTemplate = (topic: unknown) =>
  typeof topic === 'string' && topic.length > 0 && topic.length <= 500 && !/[+#\0]/.test(topic);

/** Fills `{{name}}` (or `{{a.b}}`) from the body; values lose `/`, `+`, `#` so they stay one level. */
export function mqttTopic(template: string, body: unknown, connectorId: string): string {
  const topic = template.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_m, path: string) => {
    if (path === 'connectorId') return connectorId;
    let value: unknown = body;
    for (const part of path.split('.')) {
      value =
        value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
    }
    const text =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : '';
    return text.replace(/[/+#\0]/g, '_') || '_';
  });
  if (!validTopicTemplate(topic))
    throw new DeliveryError(`"${topic}" is not a topic one can publish to`, false, 'BAD_TOPIC');
  return topic;
}

/** Rules the settings schema cannot say: URL and address forms, PEM labels, settings that go together. */
function validate(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  check.string('url', { required: true, maxLength: 500 });
  if (typeof config.url === 'string' && !/^(mqtts?|tcp|ssl|tls|wss?):\/\/[^\s/]+/i.test(config.url)) {
    check.problem(
      'url',
      'format',
      { format: 'mqtt-url' },
      'must be an mqtt://, mqtts://, ws:// or wss:// URL with a host',
    );
  }
  check.string('topic', { required: true, maxLength: 500 });
  if (typeof config.topic === 'string' && !validTopicTemplate(config.topic)) {
    check.problem(
      'topic',
      'format',
      { format: 'mqtt-topic' },
      'must be a topic without wildcards (+, #); {{field}} takes a field of the message',
    );
  }
  check.pem('serverCa', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientCert', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  check.together('clientCert', 'clientKey');
  return check.problems;
}

interface Held {
  client: MqttClient;
  /** The guard's refusal, when that is why the last attempt failed. */
  refused: () => TargetRefusedError | undefined;
  lastError: () => unknown;
}

function clientOptions(connector: Connector, config: MqttOutConfig, ctx: DeliveryContext): IClientOptions {
  const key = openSecret(connector.config, 'clientKey', ctx);
  return {
    clientId: config.clientId || `stellwerk-out-${connector.id.replace(/-/g, '').slice(-12)}`,
    protocolVersion: config.protocolVersion ?? 4,
    clean: true,
    reconnectPeriod: 1000,
    connectTimeout: 5000,
    // Messages are queued (bounded) by the dispatcher, never inside mqtt.js while offline.
    queueQoSZero: false,
    ...(config.username ? { username: config.username } : {}),
    ...(openSecret(connector.config, 'password', ctx) !== undefined
      ? { password: openSecret(connector.config, 'password', ctx) }
      : {}),
    ...(config.serverCa ? { ca: config.serverCa } : {}),
    ...(config.clientCert ? { cert: config.clientCert } : {}),
    ...(key ? { key } : {}),
    rejectUnauthorized: config.rejectUnauthorized ?? true,
  };
}

function sender(ctx: DeliveryContext): OutgoingSender {
  const clients = new Map<string, Held>();

  /** Connected within CONNECT_WAIT_MS, refused by the guard, or neither. */
  const connected = ({ client, refused }: Held) =>
    client.connected
      ? Promise.resolve(true)
      : new Promise<boolean>((resolve) => {
          const done = (ok: boolean) => {
            clearTimeout(timer);
            client.off('connect', onConnect);
            client.off('error', onError);
            resolve(ok);
          };
          const onConnect = () => done(true);
          const onError = () => (refused() ? done(false) : undefined);
          const timer = setTimeout(() => done(false), CONNECT_WAIT_MS);
          if (refused()) return done(false);
          client.on('connect', onConnect);
          client.on('error', onError);
        });

  function clientFor(connector: Connector): Held {
    const existing = clients.get(connector.id);
    if (existing) return existing;
    const config = connector.config as unknown as MqttOutConfig;
    const client = ctx.dial.mqtt(config.url, clientOptions(connector, config, ctx));
    let lastError: unknown;
    // Errors surface as failed deliveries; the listener keeps mqtt.js from throwing them.
    client.on('error', (error) => (lastError = error));
    client.on('connect', () => (lastError = undefined));
    const held: Held = { client, refused: () => refusalOf(lastError), lastError: () => lastError };
    clients.set(connector.id, held);
    return held;
  }

  const release = async (connectorId: string) => {
    const held = clients.get(connectorId);
    clients.delete(connectorId);
    if (held) await held.client.endAsync(true).catch(() => undefined);
  };

  return {
    async deliver(connector, message) {
      const config = connector.config as unknown as MqttOutConfig;
      const topic = mqttTopic(message.topic ?? config.topic, message.body, connector.id);
      const held = clientFor(connector);
      const { client } = held;
      if (!(await connected(held))) {
        // A refused target gets a new client next time: the name may point elsewhere by then.
        if (held.refused()) await release(connector.id);
        throw connectionFailed(ctx, held.lastError(), 'the broker', {
          connectorId: connector.id,
          // Host and port only: a URL may carry the broker password.
          target: new URL(config.url).host,
        });
      }
      const { text } = encodeBody(message.body);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new DeliveryError(`No acknowledgement within ${PUBLISH_TIMEOUT_MS} ms`, true, 'TIMEOUT')),
          PUBLISH_TIMEOUT_MS,
        );
        client.publish(topic, text, { qos: config.qos ?? 1, retain: config.retain ?? false }, (error) => {
          clearTimeout(timer);
          if (error) reject(new DeliveryError(`Publish failed: ${error.message}`, true, 'PUBLISH_FAILED'));
          else resolve();
        });
      });
    },
    release,
    async close() {
      await Promise.all([...clients.keys()].map(release));
    },
  };
}

export const mqttOutKind: ConnectorKindDescriptor = {
  type: 'mqtt-out',
  direction: 'outgoing',
  summary: 'Publishes each message to a topic template on an external MQTT broker (QoS 0–2, retain, TLS).',
  capabilities: ['sends'],
  delivers: 'mqtt',
  settings: settingsObject(
    {
      url: text(500, 'mqtt://, mqtts://, ws:// or wss:// URL of the broker'),
      topic: text(500, 'Topic template; {{field}} takes a field of the message'),
      qos: oneOf([0, 1, 2]),
      retain: flag(),
      protocolVersion: oneOf([4, 5], '4: MQTT 3.1.1, 5: MQTT 5'),
      clientId: text(100),
      username: text(200),
      password: secret(500),
      ...tlsFields(),
      ...deliveryFields(),
    },
    ['url', 'topic'],
  ),
  check: validate,
  devices: PLAIN_DEVICES,
  runtime: ({ outgoing }) => ({ sender: sender(outgoing) }),
};
