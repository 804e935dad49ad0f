import type { ConnectorKind } from '../connector-kind.js';
import { ConfigCheck } from './config-fields.js';

/**
 * The embedded broker. Credentials are issued by the connector service at creation (and on
 * rotation); devices publish to `connectors/{connectorId}/devices/{device_id}/up`. The broker
 * itself (server/src/broker) authenticates through `ConnectorService.authenticateBroker`.
 * Settings: `maxConnections`, the clients this connector may have connected at once, replacing
 * STELLWERK_MQTT_MAX_CONNECTIONS_PER_CONNECTOR (the account's limit and the broker's cap still apply).
 */
export const mqttBrokerKind: ConnectorKind = {
  type: 'mqtt-broker',
  direction: 'incoming',
  capabilities: ['broker', 'receives'],
  validate(config) {
    const check = new ConfigCheck(config);
    check.integer('maxConnections', 1, 10_000_000);
    return check.problems;
  },
};
