import { MAX_ARRAY_ITEMS } from '../../ingest/ingest.types.js';
import { errors } from '../../platform/errors.js';
import type { WebhookItem } from '../connector-kind.js';

/**
 * `{"device_id": "…", …values}` or an array of at most MAX_ARRAY_ITEMS such objects; each object
 * becomes one packet whose payload is its own JSON text, so the device's (JSON) driver parses it.
 * The whole body is refused when one item is bad: the sender fixes and resends it as a whole.
 */
export function jsonItems(body: unknown, deviceIdField = 'device_id'): WebhookItem[] {
  const list = Array.isArray(body) ? body : [body];
  if (list.length > MAX_ARRAY_ITEMS) {
    throw errors.unprocessable(
      'TOO_MANY_ITEMS',
      `At most ${MAX_ARRAY_ITEMS} items per request; this one has ${list.length}`,
      [{ limit: MAX_ARRAY_ITEMS, received: list.length }],
    );
  }
  if (list.length === 0) throw errors.unprocessable('INVALID_PAYLOAD', 'The array is empty');
  return list.map((item, index) => {
    const where = Array.isArray(body) ? ` (item ${index})` : '';
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw errors.unprocessable('INVALID_PAYLOAD', `Each item must be a JSON object${where}`, [{ index }]);
    }
    const id = (item as Record<string, unknown>)[deviceIdField];
    const deviceKey = typeof id === 'number' && Number.isFinite(id) ? String(id) : id;
    if (typeof deviceKey !== 'string' || deviceKey.trim() === '' || deviceKey.length > 200) {
      throw errors.unprocessable(
        'DEVICE_ID_MISSING',
        `Each item needs "${deviceIdField}" (a string of at most 200 characters)${where}`,
        [{ index, field: deviceIdField }],
      );
    }
    return { deviceKey: deviceKey.trim(), payload: Buffer.from(JSON.stringify(item)) };
  });
}
