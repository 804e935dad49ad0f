import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { jsonItems } from './json-items.js';
import { settingsObject, text } from './settings-fields.js';

/**
 * Incoming webhook: `POST {publicUrl}/xapi/v1/webhooks/{token}` with a JSON object or an array of
 * up to 50; `deviceIdField` (default `device_id`) names the field that addresses the device.
 */
export const webhookInKind: ConnectorKindDescriptor = {
  type: 'webhook-in',
  direction: 'incoming',
  summary: 'Systems POST JSON packets (one object or up to 50) to a secret URL.',
  capabilities: ['webhook', 'receives'],
  settings: settingsObject({
    deviceIdField: text(100, 'Field that addresses the device (default device_id)'),
  }),
  devices: PLAIN_DEVICES,
  runtime: () => ({
    webhookItems(body, connector) {
      const field = connector.config.deviceIdField;
      return jsonItems(body, typeof field === 'string' && field ? field : 'device_id');
    },
  }),
};
