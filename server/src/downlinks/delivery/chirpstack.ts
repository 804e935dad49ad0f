import type { DeliveryContext } from '../../outgoing/delivery.js';
import type { DownlinkDevice, DownlinkSender, RemoteDeviceDeleter } from '../downlink-delivery.js';
import { callNetworkServer, segment } from './network-server-http.js';

/**
 * ChirpStack v4 through its REST API (chirpstack-rest-api, the grpc-gateway in front of the gRPC
 * API; field names in lowerCamelCase JSON, bytes as base64). Settings: `apiUrl` (the REST API
 * base), `apiToken` (sealed). From api/proto/api/device.proto of chirpstack/chirpstack:
 * - `DeviceService.Enqueue`: `POST /api/devices/{queue_item.dev_eui}/queue` with body
 *   `{"queueItem":{"devEui","confirmed","fPort","data"}}`, answering `{"id":"<queue item uuid>"}`.
 *   That id comes back in the `ack`/`txack` events (`queueItemId`), so it is the downlink's remoteId.
 * - `DeviceService.Delete`: `DELETE /api/devices/{dev_eui}`.
 * The token goes in `Authorization: Bearer <API token>`.
 */

const devEuiOf = (device: DownlinkDevice) =>
  segment((device.devEui ?? device.deviceKey).toLowerCase(), 'devEui');

export function chirpstackDownlinkSender(ctx: DeliveryContext): DownlinkSender {
  return {
    needsFPort: () => true,
    async send(connector, downlink) {
      const devEui = devEuiOf(downlink.device);
      const answer = await callNetworkServer(ctx, connector, {
        method: 'POST',
        path: `/api/devices/${devEui}/queue`,
        tokenSetting: 'apiToken',
        body: {
          queueItem: {
            devEui: decodeURIComponent(devEui),
            confirmed: downlink.confirmed,
            fPort: downlink.fPort,
            data: downlink.bytes.toString('base64'),
          },
        },
      });
      const id = (answer as { id?: unknown } | null)?.id;
      return { status: 'queued', ...(typeof id === 'string' && id !== '' ? { remoteId: id } : {}) };
    },
  };
}

export function chirpstackDeviceDeleter(ctx: DeliveryContext): RemoteDeviceDeleter {
  return {
    async deleteDevice(connector, device) {
      await callNetworkServer(ctx, connector, {
        method: 'DELETE',
        path: `/api/devices/${devEuiOf(device)}`,
        tokenSetting: 'apiToken',
        alsoDone: [404],
      });
    },
  };
}

/** What a ChirpStack kind's runtime adds: `{ ...chirpstackNetworkServer(outgoing) }`. */
export const chirpstackNetworkServer = (ctx: DeliveryContext) => ({
  downlink: chirpstackDownlinkSender(ctx),
  remoteDelete: chirpstackDeviceDeleter(ctx),
});
