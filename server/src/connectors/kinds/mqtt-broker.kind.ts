import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { brokerDownlinkSender } from '../../downlinks/delivery/mqtt.js';
import { integer, settingsObject } from './settings-fields.js';

/**
 * The embedded broker. Credentials are issued by the connector service at creation (and on
 * rotation); devices publish to `connectors/{connectorId}/devices/{device_id}/up`. The broker
 * itself (server/src/broker) authenticates through `ConnectorService.authenticateBroker`.
 * Settings: `maxConnections`, the clients this connector may have connected at once, replacing
 * STELLWERK_MQTT_MAX_CONNECTIONS_PER_CONNECTOR (the account's limit and the broker's cap still apply).
 */
export const mqttBrokerKind: ConnectorKindDescriptor = {
  type: 'mqtt-broker',
  direction: 'incoming',
  summary:
    'Devices publish to the embedded MQTT broker with issued credentials, on `connectors/{id}/devices/{device_id}/up`.',
  capabilities: ['broker', 'receives', 'downlink', 'monitoring'],
  monitoring: 'broker-clients',
  settings: settingsObject({
    maxConnections: integer(1, 10_000_000, 'Clients this connector may have connected at once'),
  }),
  devices: { ...PLAIN_DEVICES, deviceIdIsTopicLevel: true },
  runtime: ({ broker }) => ({ downlink: brokerDownlinkSender(broker) }),
};
