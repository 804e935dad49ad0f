import type { ConnectorKind } from '../connector-kind.js';
import { ConfigCheck } from './config-fields.js';
import { jsonItems } from './json-items.js';

/**
 * Incoming webhook: `POST {publicUrl}/xapi/v1/webhooks/{token}` with a JSON object or an array of
 * up to 50; `deviceIdField` (default `device_id`) names the field that addresses the device.
 */
export const webhookInKind: ConnectorKind = {
  type: 'webhook-in',
  direction: 'incoming',
  capabilities: ['webhook', 'receives'],
  validate(config) {
    const check = new ConfigCheck(config);
    check.string('deviceIdField', { maxLength: 100 });
    return check.problems;
  },
  webhookItems(body, connector) {
    const field = connector.config.deviceIdField;
    return jsonItems(body, typeof field === 'string' && field ? field : 'device_id');
  },
};
