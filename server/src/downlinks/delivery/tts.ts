import type { DeliveryContext } from '../../outgoing/delivery.js';
import type { DownlinkDevice, DownlinkSender, RemoteDeviceDeleter } from '../downlink-delivery.js';
import { callNetworkServer, segment } from './network-server-http.js';

/**
 * The Things Stack v3: downlinks through the application's webhook downlink API, device deletion
 * through the registries. Settings: `apiUrl`, `apiKey` (sealed), `applicationId`, `webhookId`.
 *
 * Downlinks — "Scheduling Downlinks" (thethingsindustries.com/docs/integrations/webhooks/scheduling-downlinks/):
 * `POST /api/v3/as/applications/{application_id}/webhooks/{webhook_id}/devices/{device_id}/down/push`
 * with `Authorization: Bearer <API key with traffic writing rights>` and
 * `{"downlinks":[{"frm_payload":"<base64>","f_port":N,"priority":"NORMAL","confirmed":bool,
 * "correlation_ids":[…]}]}`. The answer is empty: TTS reports progress later as
 * downlink_queued/sent/ack/nack/failed webhook messages, which carry the correlation ids back, so
 * Stellwerk's downlink id travels as `stellwerk:downlink:<id>`.
 *
 * Deletion — "End Device APIs" (…/docs/api/reference/grpc/end_device/): a device lives in the
 * Identity, Join, Network and Application Server registries; delete it in the reverse order of
 * registration: AS, NS, JS, then IS. A 404 from a registry means it is not there (ABP devices have no
 * Join Server entry), which is what a delete wants.
 */

const CORRELATION_PREFIX = 'stellwerk:downlink:';
export const ttsCorrelationId = (downlinkId: string) => `${CORRELATION_PREFIX}${downlinkId}`;

const CORRELATION = /^stellwerk:downlink:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** Stellwerk's downlink id among a TTS message's `correlation_ids` (downlink_sent/ack/nack/failed). */
export function downlinkIdFromCorrelationIds(ids: unknown): string | undefined {
  if (!Array.isArray(ids)) return undefined;
  for (const id of ids) {
    const match = typeof id === 'string' ? CORRELATION.exec(id) : null;
    if (match) return match[1]!.toLowerCase();
  }
  return undefined;
}

/** The TTS end-device id: the device's own, else its `device_id` (the kind's identity rules). */
const endDeviceIdOf = (device: DownlinkDevice) =>
  segment(device.endDeviceId ?? device.deviceKey, 'endDeviceId');

export function ttsDownlinkSender(ctx: DeliveryContext): DownlinkSender {
  return {
    needsFPort: () => true,
    async send(connector, downlink) {
      const app = segment(connector.config.applicationId, 'The connector setting applicationId');
      const webhook = segment(connector.config.webhookId, 'The connector setting webhookId');
      await callNetworkServer(ctx, connector, {
        method: 'POST',
        path: `/api/v3/as/applications/${app}/webhooks/${webhook}/devices/${endDeviceIdOf(downlink.device)}/down/push`,
        tokenSetting: 'apiKey',
        body: {
          downlinks: [
            {
              f_port: downlink.fPort,
              frm_payload: downlink.bytes.toString('base64'),
              confirmed: downlink.confirmed,
              priority: 'NORMAL',
              correlation_ids: [ttsCorrelationId(downlink.id)],
            },
          ],
        },
      });
      return { status: 'queued' };
    },
  };
}

export function ttsDeviceDeleter(ctx: DeliveryContext): RemoteDeviceDeleter {
  return {
    async deleteDevice(connector, device) {
      const app = segment(connector.config.applicationId, 'The connector setting applicationId');
      const id = endDeviceIdOf(device);
      for (const registry of ['/as', '/ns', '/js', '']) {
        await callNetworkServer(ctx, connector, {
          method: 'DELETE',
          path: `/api/v3${registry}/applications/${app}/devices/${id}`,
          tokenSetting: 'apiKey',
          alsoDone: [404],
        });
      }
    },
  };
}
