import { api } from '../../api/client';
import type { Reply } from '../../api/generated';

export type Gateway = Reply<'GET /xapi/v1/gateways/{id}'>;
export type NetworkConnector = { id: string; title: string; type: string };

/** Connector kinds whose gateways Stellwerk can know: the LoRaWAN network servers. */
const NETWORK_SERVER_TYPES = ['tts-uplink', 'chirpstack-uplink', 'chirpstack-mqtt', 'loriot-uplink'];
/** Whether a connector kind is a LoRaWAN network server (ports, confirmed downlinks, gateways). */
export const isNetworkServerType = (type: string): boolean => NETWORK_SERVER_TYPES.includes(type);
/** Of those, the ones whose gateway list the server can import. */
export const IMPORTABLE_TYPES = ['tts-uplink', 'chirpstack-uplink', 'chirpstack-mqtt'];

/** The account's LoRaWAN network-server connectors (none when the caller may not read connectors). */
export async function networkConnectors(): Promise<NetworkConnector[]> {
  try {
    const reply = await api.call('GET /xapi/v1/connectors', { query: { pageSize: 500, sort: 'title' } });
    return reply.data
      .filter((c) => NETWORK_SERVER_TYPES.includes(c.type))
      .map((c) => ({ id: c.id, title: c.title, type: c.type }));
  } catch {
    return [];
  }
}

/** `-58.3 dBm`, or a dash without a value. */
export const withUnit = (value: number | null, unit: string): string =>
  value === null ? '–' : `${value} ${unit}`;

export const statusBadge = (status: string): string =>
  status === 'online' ? 'badge badge-success' : 'badge';

/** A gateway on the map: coloured by its status. */
export interface GatewayMarker {
  id: string;
  title: string;
  eui: string;
  status: string;
  latitude: number;
  longitude: number;
}

/** Every gateway of the account with a location (none when the caller may not read gateways). */
export async function locatedGateways(): Promise<GatewayMarker[]> {
  const located: GatewayMarker[] = [];
  try {
    for (let page = 1; page <= 20; page += 1) {
      const reply = await api.call('GET /xapi/v1/gateways', {
        query: { page, pageSize: 500, sort: 'title' },
      });
      for (const g of reply.data)
        if (g.location)
          located.push({ id: g.id, title: g.title, eui: g.eui, status: g.status, ...g.location });
      if (page * reply.meta.pageSize >= reply.meta.total) break;
    }
  } catch {
    return [];
  }
  return located;
}
