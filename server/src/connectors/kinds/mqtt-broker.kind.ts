import type { ConnectorKind } from '../connector-kind.js';

/**
 * The embedded broker. Credentials are issued by the connector service at creation (and on
 * rotation); devices publish to `connectors/{connectorId}/devices/{device_id}/up`. The broker
 * itself (server/src/broker) authenticates through `ConnectorService.authenticateBroker`.
 */
export const mqttBrokerKind: ConnectorKind = {
  type: 'mqtt-broker',
  direction: 'incoming',
  capabilities: ['broker', 'receives'],
  validate: () => [],
};
