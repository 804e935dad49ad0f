import { errors } from '../../platform/errors.js';
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
    webhookMessage(body, connector, request) {
      // One URL: a path after the token means nothing to a plain webhook.
      if (request.path !== '') throw errors.notFound('Webhook');
      const field = connector.config.deviceIdField;
      const items = jsonItems(body, typeof field === 'string' && field ? field : 'device_id');
      return { items, events: [], logs: [] };
    },
  }),
};
