import type { ConnectorKind } from '../connector-kind.js';
import { ConfigCheck, maskSecrets, sealSecrets } from './config-fields.js';

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
}

export const MQTT_IN_SECRETS = ['password', 'clientKey'] as const;
const MAX_TOPICS = 20;

function checkTopics(check: ConfigCheck, topics: unknown): void {
  if (!Array.isArray(topics) || topics.length === 0 || topics.length > MAX_TOPICS) {
    return check.custom('topics', `must be a list of 1 to ${MAX_TOPICS} topic filters`);
  }
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
    if (!ok) check.custom(`topics/${i}`, 'is not a valid MQTT topic filter');
  });
}

/**
 * Subscribes to an external MQTT broker (server/src/connectors/mqtt-in.runtime.ts keeps the
 * client). Username/password or TLS with server CA, client certificate and key; `clientId` settable.
 */
export function mqttInKind(runtime: {
  start(connector: Parameters<NonNullable<ConnectorKind['start']>>[0]): Promise<void>;
  stop(connectorId: string): Promise<void>;
}): ConnectorKind {
  return {
    type: 'mqtt-in',
    direction: 'incoming',
    capabilities: ['subscribe', 'receives'],
    validate(config) {
      const check = new ConfigCheck(config);
      check.string('url', { required: true, maxLength: 500 });
      if (typeof config.url === 'string' && !/^(mqtts?|tcp|ssl|tls|wss?):\/\/[^\s/]+/i.test(config.url)) {
        check.custom('url', 'must be an mqtt://, mqtts://, ws:// or wss:// URL with a host');
      }
      checkTopics(check, config.topics);
      check.oneOf('qos', [0, 1]);
      check.oneOf('protocolVersion', [4, 5]);
      check.string('clientId', { maxLength: 100 });
      check.string('username', { maxLength: 200 });
      check.string('password', { maxLength: 500 });
      check.pem('serverCa', /-----BEGIN [A-Z ]+-----/);
      check.pem('clientCert', /-----BEGIN [A-Z ]+-----/);
      check.pem('clientKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
      check.boolean('rejectUnauthorized');
      check.oneOf('deviceIdSource', ['topic', 'payload']);
      check.integer('deviceIdTopicSegment', -50, 50);
      check.string('deviceIdField', { maxLength: 100 });
      if ((config.clientCert === undefined) !== (config.clientKey === undefined)) {
        check.custom('clientKey', 'clientCert and clientKey go together');
      }
      return check.problems;
    },
    prepareConfig: (config, previous, ctx) => sealSecrets(config, previous, MQTT_IN_SECRETS, ctx),
    publicConfig: (config) => maskSecrets(config, MQTT_IN_SECRETS),
    start: (connector) => runtime.start(connector),
    stop: (connectorId) => runtime.stop(connectorId),
  };
}
