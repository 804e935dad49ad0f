import type { Connector } from '../connectors/connector.entity.js';
import type { ConnectorStatus } from './monitoring-conditions.js';

export interface ConnectionProbes {
  /** An mqtt-in connector's client is connected and subscribed. */
  mqttInConnected(connectorId: string): boolean;
  /** Clients of an embedded-broker connector connected now. */
  brokerClients(connectorId: string): number;
}

/**
 * A connector's status as connector monitoring sees it: `inactive` when deactivated; for kinds
 * that keep a connection (mqtt-in: our client to an external broker; mqtt-broker: gateways on the
 * embedded broker) `connected` or `disconnected`; for the rest (webhooks …) `active`.
 */
export function connectorStatus(connector: Connector, probes: ConnectionProbes): ConnectorStatus {
  if (!connector.active) return 'inactive';
  // chirpstack-mqtt subscribes through the mqtt-in runtime.
  if (connector.type === 'mqtt-in' || connector.type === 'chirpstack-mqtt')
    return probes.mqttInConnected(connector.id) ? 'connected' : 'disconnected';
  if (connector.type === 'mqtt-broker')
    return probes.brokerClients(connector.id) > 0 ? 'connected' : 'disconnected';
  return 'active';
}
