import type { Connector } from '../connectors/connector.entity.js';

/**
 * What a connector kind implements to deliver downlinks and to delete devices on the system behind
 * it (capabilities `downlink` and `remote-delete`). The downlink queue (this domain) decides what
 * to send and when; a kind only knows how to reach its network server or broker. Kinds that dial out
 * go through the outgoing-target guard like every other dial-out.
 */

/** The device as its connector addresses it. */
export interface DownlinkDevice {
  id: string;
  /** `device_id` on the connector (lower-case EUI for LoRaWAN kinds). */
  deviceKey: string;
  devEui?: string | null;
  /** The Things Stack's end-device id. */
  endDeviceId?: string | null;
}

export interface DownlinkRequest {
  /** Stellwerk's downlink id; kinds pass it on as a correlation id where the network server keeps one. */
  id: string;
  device: DownlinkDevice;
  /** Null where the connector carries none (see `DownlinkSender.needsFPort`). */
  fPort: number | null;
  bytes: Buffer;
  confirmed: boolean;
}

export interface DownlinkSent {
  /** The network server's id of the queued item, when it returns one. */
  remoteId?: string;
  /**
   * `sent` when handing over is delivery (the embedded broker published it); `queued` when the
   * network server reports sending and acknowledgement later through its events.
   */
  status: 'queued' | 'sent';
}

export interface DownlinkSender {
  /**
   * Whether a downlink to this connector must name an fPort (LoRaWAN network servers, a topic with
   * `{fPort}`); elsewhere it is optional and not carried.
   */
  needsFPort?(connector: Connector): boolean;
  /** Throws an Error whose message says why the network server or broker refused it. */
  send(connector: Connector, downlink: DownlinkRequest): Promise<DownlinkSent>;
}

export interface RemoteDeviceDeleter {
  /** Deletes the device on the network server; resolves when it is gone (or was never there). */
  deleteDevice(connector: Connector, device: DownlinkDevice): Promise<void>;
}
