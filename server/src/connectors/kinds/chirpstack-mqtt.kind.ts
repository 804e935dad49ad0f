import { errors } from '../../platform/errors.js';
import type { ConnectorKindDescriptor, MqttMessageReader } from '../connector-kind.js';
import { chirpstackEvent } from './chirpstack.js';
import { chirpstackNetworkServer } from '../../downlinks/delivery/chirpstack.js';
import { chirpstackApiFields } from './chirpstack-uplink.kind.js';
import { ConfigCheck } from './config-fields.js';
import { checkApiUrl, LORAWAN_DEVICES, lorawanFields } from './lorawan.js';
import { oneOf, secret, settingsObject, text, tlsFields } from './settings-fields.js';

/** One MQTT topic level: no wildcards, no separators. */
const LEVEL = /^[^/+#]{1,200}$/;

/** The integration's event topics; one application, or every application the login may read. */
export function chirpstackTopics(config: Record<string, unknown>): string[] {
  const application =
    typeof config.applicationId === 'string' && config.applicationId ? config.applicationId : '+';
  return [`application/${application}/device/+/event/+`];
}

/** `application/{applicationId}/device/{devEui}/event/{event}` → the event. */
export const chirpstackReader: MqttMessageReader = {
  topics: chirpstackTopics,
  read(topic, payload, connector) {
    const levels = topic.split('/');
    if (
      levels.length !== 6 ||
      levels[0] !== 'application' ||
      levels[2] !== 'device' ||
      levels[4] !== 'event'
    ) {
      throw errors.unprocessable('INVALID_TOPIC', `Not a ChirpStack event topic: ${topic.slice(0, 200)}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(payload.toString('utf8'));
    } catch {
      throw errors.unprocessable(
        'INVALID_PAYLOAD',
        'A ChirpStack event must be JSON (set the integration to JSON)',
      );
    }
    return chirpstackEvent(levels[5]!.toLowerCase(), body, connector.id);
  },
};

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
  if (
    typeof config.applicationId === 'string' &&
    config.applicationId !== '' &&
    !LEVEL.test(config.applicationId)
  ) {
    check.problem(
      'applicationId',
      'format',
      { format: 'mqtt-topic-level' },
      'must be one topic level (no /, + or #)',
    );
  }
  check.pem('serverCa', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientCert', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  check.together('clientCert', 'clientKey');
  return [...check.problems, ...checkApiUrl(config)];
}

/**
 * ChirpStack v4 MQTT integration: subscribes to the integration's event topics on the MQTT broker
 * ChirpStack publishes to (an external broker, with mqtt-in's connection handling: TLS,
 * username/password, reconnects, at-least-once). Events are read by chirpstack.ts.
 */
export const chirpstackMqttKind: ConnectorKindDescriptor = {
  type: 'chirpstack-mqtt',
  direction: 'incoming',
  summary:
    'ChirpStack v4 MQTT integration on an external broker: uplinks with metadata, joins, status, acks, logs.',
  capabilities: ['subscribe', 'receives', 'downlink', 'remote-delete', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject(
    {
      url: text(500, 'mqtt://, mqtts://, ws:// or wss:// URL of the broker ChirpStack publishes to'),
      applicationId: text(200, 'ChirpStack application id (UUID); empty: every application'),
      qos: oneOf([0, 1]),
      protocolVersion: oneOf([4, 5], '4: MQTT 3.1.1, 5: MQTT 5'),
      clientId: text(100),
      username: text(200),
      password: secret(500),
      ...tlsFields(),
      ...chirpstackApiFields(),
      ...lorawanFields(),
    },
    ['url'],
  ),
  check,
  devices: LORAWAN_DEVICES,
  runtime: ({ mqttIn, outgoing }) => {
    mqttIn.register?.('chirpstack-mqtt', chirpstackReader);
    return {
      // Downlinks and deletion go through ChirpStack's REST API, not its MQTT integration.
      ...chirpstackNetworkServer(outgoing),
      start: (connector) => mqttIn.start(connector),
      stop: (connectorId) => mqttIn.stop(connectorId),
    };
  },
};
