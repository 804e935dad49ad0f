import type { Connector } from '../connectors/connector.entity.js';
import { kindDescriptor } from '../connectors/kinds/index.js';
import type { ConnectorStatus } from './monitoring-conditions.js';

export interface ConnectionProbes {
  /** The client a `connection`-monitored connector keeps (an mqtt-in client, a field-protocol link) is connected. */
  clientConnected(connectorId: string): boolean;
  /** Clients of an embedded-broker connector connected now. */
  brokerClients(connectorId: string): number;
}

/**
 * A connector's status as connector monitoring sees it: `inactive` when deactivated; for kinds
 * that keep a connection (descriptor `monitoring`: `connection` is our client to an external
 * broker, `broker-clients` are gateways on the embedded broker) `connected` or `disconnected`;
 * for the rest (webhooks …) `active`.
 */
export function connectorStatus(connector: Connector, probes: ConnectionProbes): ConnectorStatus {
  if (!connector.active) return 'inactive';
  const monitoring = kindDescriptor(connector.type)?.monitoring;
  if (monitoring === 'connection') return probes.clientConnected(connector.id) ? 'connected' : 'disconnected';
  if (monitoring === 'broker-clients')
    return probes.brokerClients(connector.id) > 0 ? 'connected' : 'disconnected';
  return 'active';
}
