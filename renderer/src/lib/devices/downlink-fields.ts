import { isNetworkServerType } from '../gateways/gateways';

/** Which LoRaWAN fields a device's downlink form offers. */
export interface DownlinkFields {
  /** The LoRaWAN port. */
  fPort: boolean;
  /** Ask the device to acknowledge the downlink. */
  confirmed: boolean;
}

/**
 * The LoRaWAN fields for a device's connector: all of them on a LoRaWAN network server; on an MQTT
 * subscription only the port, where its downlink topic names `{fPort}` (a LoRaWAN bridge behind
 * the broker); none elsewhere (the embedded broker, WebSocket, Modbus, … carry neither).
 */
export function downlinkFields(
  connector: { type: string; config: Record<string, unknown> } | null,
): DownlinkFields {
  if (!connector) return { fPort: false, confirmed: false };
  if (isNetworkServerType(connector.type)) return { fPort: true, confirmed: true };
  const topic = connector.type === 'mqtt-in' ? connector.config.downlinkTopic : undefined;
  return { fPort: typeof topic === 'string' && topic.includes('{fPort}'), confirmed: false };
}
