import type { GeoLocation } from '../ingest/packet-meta.js';

/**
 * Network-server messages that are not device data: downlink progress and gateway status. A kind
 * turns them into these events (webhooks, ChirpStack's MQTT integration); the domains that own the
 * matter subscribe: the downlink queue moves its items' status, gateways their status and figures.
 * Device data (uplinks, joins, device status, locations) travels as packets instead, so it is
 * durable and ordered like every other packet (packet-meta.ts).
 */

export type DownlinkStatus = 'queued' | 'sent' | 'acknowledged' | 'failed';

export interface DownlinkEvent {
  type: 'downlink';
  connectorId: string;
  /** The device's `device_id` as the connector addresses it (lower-case EUI for LoRaWAN kinds). */
  deviceKey: string;
  status: DownlinkStatus;
  /** Stellwerk's downlink id when the network server echoes it (TTS correlation ids). */
  downlinkId?: string;
  /** The network server's own id of the queued item (ChirpStack queue item id). */
  remoteId?: string;
  fCnt?: number;
  /** Why it failed (nack, expired, too large, …), as the network server said it. */
  reason?: string;
  at: Date;
}

export interface GatewayStatusEvent {
  type: 'gateway';
  connectorId: string;
  /** Lower-case hex. */
  gatewayEui: string;
  online?: boolean;
  location?: GeoLocation;
  at: Date;
}

export type NetworkServerEvent = DownlinkEvent | GatewayStatusEvent;

type Handler<E> = (event: E) => Promise<void> | void;

/**
 * The in-process bus between kinds and the domains that own downlinks and gateways. A handler's
 * failure is reported to `onError` and never reaches the network server's request: the webhook was
 * accepted, and a redelivery would not make the handler succeed.
 */
export class NetworkEvents {
  private readonly downlinkHandlers: Handler<DownlinkEvent>[] = [];
  private readonly gatewayHandlers: Handler<GatewayStatusEvent>[] = [];

  constructor(private readonly onError: (error: unknown, event: NetworkServerEvent) => void) {}

  onDownlink(handler: Handler<DownlinkEvent>): void {
    this.downlinkHandlers.push(handler);
  }

  onGateway(handler: Handler<GatewayStatusEvent>): void {
    this.gatewayHandlers.push(handler);
  }

  async emit(events: readonly NetworkServerEvent[]): Promise<void> {
    for (const event of events) {
      const handlers: Handler<never>[] =
        event.type === 'downlink' ? this.downlinkHandlers : this.gatewayHandlers;
      for (const handler of handlers) {
        try {
          await (handler as Handler<NetworkServerEvent>)(event);
        } catch (error) {
          this.onError(error, event);
        }
      }
    }
  }
}
