import { Type } from 'typebox';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { mqttInDownlinkSender } from '../../downlinks/delivery/mqtt.js';
import { ConfigCheck } from './config-fields.js';
import { integer, oneOf, secret, settingsObject, text, tlsFields } from './settings-fields.js';

/** Settings of an mqtt-in connector as stored (secrets sealed as `{ sealed }`). */
export interface MqttInConfig {
  url: string;
  topics: string[];
  qos?: 0 | 1;
  protocolVersion?: 4 | 5;
  clientId?: string;
  username?: string;
  password?: { sealed: string };
  serverCa?: string;
  clientCert?: string;
  clientKey?: { sealed: string };
  /** false accepts self-signed or otherwise unverifiable server certificates. */
  rejectUnauthorized?: boolean;
  /** Where the device id comes from: a topic segment (default, the last) or a payload field. */
  deviceIdSource?: 'topic' | 'payload';
  /** Segment index; negative counts from the end (-1 = last). */
  deviceIdTopicSegment?: number;
  deviceIdField?: string;
  /** Where downlinks are published: a topic with `{deviceId}`, `{devEui}`, `{fPort}` placeholders. */
  downlinkTopic?: string;
  /**
   * Consumes through an MQTT 5 shared subscription `$share/<group>/<filter>` with `sharedSlots`
   * persistent sessions (mqtt-in.shared.ts): the nodes of a cluster share the messages.
   */
  sharedGroup?: string;
  sharedSlots?: number;
}

const MAX_TOPICS = 20;
const SHARED_GROUP = /^[A-Za-z0-9_-]*$/;

function checkTopics(check: ConfigCheck, topics: unknown): void {
  const message = `must be a list of 1 to ${MAX_TOPICS} topic filters`;
  if (!Array.isArray(topics)) return check.problem('topics', 'type', { type: 'array' }, message);
  if (topics.length === 0) return check.problem('topics', 'minItems', { limit: 1 }, message);
  if (topics.length > MAX_TOPICS) return check.problem('topics', 'maxItems', { limit: MAX_TOPICS }, message);
  topics.forEach((topic, i) => {
    const ok =
      typeof topic === 'string' &&
      topic.length > 0 &&
      topic.length <= 500 &&
      // `#` only as the last level, `+` only as a whole level (MQTT 3.1.1, 4.7.1).
      topic.split('/').every((level, j, all) => {
        if (level.includes('#')) return level === '#' && j === all.length - 1;
        return !level.includes('+') || level === '+';
      });
    if (!ok)
      check.problem(
        `topics/${i}`,
        'format',
        { format: 'mqtt-topic-filter' },
        'is not a valid MQTT topic filter',
      );
  });
}

/** Rules the schema cannot say: the URL scheme, the topic-filter grammar, PEM labels, cert and key together. */
function check(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  if (typeof config.url === 'string' && !/^(mqtts?|tcp|ssl|tls|wss?):\/\/[^\s/]+/i.test(config.url)) {
    check.problem(
      'url',
      'format',
      { format: 'mqtt-url' },
      'must be an mqtt://, mqtts://, ws:// or wss:// URL with a host',
    );
  }
  checkTopics(check, config.topics);
  if (typeof config.downlinkTopic === 'string' && /[#+]/.test(config.downlinkTopic)) {
    check.problem(
      'downlinkTopic',
      'format',
      { format: 'mqtt-topic' },
      'must be a topic name without wildcards',
    );
  }
  if (typeof config.sharedGroup === 'string' && !SHARED_GROUP.test(config.sharedGroup)) {
    check.problem(
      'sharedGroup',
      'pattern',
      { pattern: SHARED_GROUP.source },
      'may hold letters, digits, "-" and "_" only',
    );
  }
  check.pem('serverCa', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientCert', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  check.together('clientCert', 'clientKey');
  return check.problems;
}

/**
 * Subscribes to an external MQTT broker (server/src/connectors/mqtt-in.runtime.ts keeps the
 * client). Username/password or TLS with server CA, client certificate and key; `clientId` settable.
 */
export const mqttInKind: ConnectorKindDescriptor = {
  type: 'mqtt-in',
  direction: 'incoming',
  summary: 'Subscribes to topics on an external MQTT broker (3.1.1 or 5, TLS, username/password).',
  capabilities: ['subscribe', 'receives', 'downlink', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject(
    {
      url: text(500, 'mqtt://, mqtts://, ws:// or wss:// URL of the broker'),
      topics: Type.Array(text(500), {
        minItems: 1,
        maxItems: MAX_TOPICS,
        description: 'Topic filters to subscribe to',
      }),
      qos: oneOf([0, 1]),
      protocolVersion: oneOf([4, 5], '4: MQTT 3.1.1, 5: MQTT 5'),
      clientId: text(100),
      username: text(200),
      password: secret(500),
      ...tlsFields(),
      deviceIdSource: oneOf(['topic', 'payload'], 'Where the device id comes from (default topic)'),
      deviceIdTopicSegment: integer(-50, 50, 'Topic level of the device id; negative counts from the end'),
      deviceIdField: text(100, 'Payload field of the device id'),
      downlinkTopic: text(
        500,
        'Topic downlinks are published on; {deviceId}, {devEui} and {fPort} are replaced (e.g. devices/{deviceId}/down)',
      ),
      sharedGroup: text(
        100,
        'Shared-subscription group (MQTT 5 $share/<group>/<filter>, e.g. stellwerk); empty: a plain subscription',
      ),
      sharedSlots: integer(
        1,
        16,
        'Persistent sessions sharing the subscription (default 2), spread over the nodes',
      ),
    },
    ['url', 'topics'],
  ),
  check,
  devices: PLAIN_DEVICES,
  runtime: ({ mqttIn }) => ({
    start: (connector) => mqttIn.start(connector),
    stop: (connectorId) => mqttIn.stop(connectorId),
    downlink: mqttInDownlinkSender(mqttIn),
  }),
};

/** The device id from the topic segment or the payload field the settings name. */
export function deviceKeyOf(config: MqttInConfig, topic: string, message: Buffer): string | undefined {
  if (config.deviceIdSource === 'payload') {
    try {
      const value = (JSON.parse(message.toString('utf8')) as Record<string, unknown> | null)?.[
        config.deviceIdField || 'device_id'
      ];
      const text = typeof value === 'number' ? String(value) : value;
      return typeof text === 'string' && text.trim() && text.length <= 200 ? text.trim() : undefined;
    } catch {
      return undefined;
    }
  }
  const levels = topic.split('/');
  const index = config.deviceIdTopicSegment ?? -1;
  const level = levels.at(index);
  return level && level.length <= 200 ? level : undefined;
}
