import type { DownlinkSender } from '../../../downlinks/downlink-delivery.js';
import { DeliveryError } from '../../../outgoing/delivery.js';
import type { LinkHost } from '../../links/link.types.js';
import { parsePointer, setPointer } from './json-pointer.js';
import { WebSocketSession, type WebSocketConfig } from './websocket.link.js';

/**
 * Downlinks as WebSocket messages (docs/connectors/websocket.md). `downlinkFormat` `json` (default):
 * the downlink's bytes are a UTF-8 JSON object, sent as a text message; with a device id pointer the
 * device's id is written at that pointer, so the server knows whom it is for. `binary`: the bytes
 * as they are, as a binary message. The fPort is not carried.
 */

export interface Frame {
  data: Buffer;
  binary: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The message a downlink becomes; a DeliveryError (not retried) for bytes that are no JSON object. */
export function downlinkFrame(config: WebSocketConfig, deviceKey: string, bytes: Buffer): Frame {
  if (config.downlinkFormat === 'binary') return { data: bytes, binary: true };
  let document: unknown;
  try {
    document = JSON.parse(utf8.decode(bytes)) as unknown;
  } catch {
    throw invalid('The downlink is not UTF-8 JSON; send a JSON object, or set downlinkFormat to binary');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw invalid('The downlink must be a JSON object');
  const tokens = config.deviceIdPointer ? parsePointer(config.deviceIdPointer) : undefined;
  if (tokens && !setPointer(document as Record<string, unknown>, tokens, deviceKey))
    throw invalid(`The device id cannot be written at ${config.deviceIdPointer} of the downlink`);
  return { data: Buffer.from(JSON.stringify(document)), binary: false };
}

const invalid = (message: string) => new DeliveryError(message, false, 'DOWNLINK_PAYLOAD_INVALID');

/** Sends with the connector's open WebSocket; retried while it is not connected. */
export function websocketDownlinkSender(links: LinkHost): DownlinkSender {
  return {
    async send(connector, downlink) {
      const config = connector.config as unknown as WebSocketConfig;
      const frame = downlinkFrame(config, downlink.device.deviceKey, downlink.bytes);
      const session = links.session(connector.id);
      if (!(session instanceof WebSocketSession))
        throw new DeliveryError('The connector is not connected to its WebSocket server', true);
      try {
        await session.send(frame);
      } catch (error) {
        throw new DeliveryError(`Not sent on the WebSocket: ${(error as Error).message}`, true);
      }
      return { status: 'sent' };
    },
  };
}
