import { META_STATE_PREFIX } from './packet-meta.js';

/**
 * The value type of each `_meta.*` device state (packet-meta.ts `metaStates`), so health rules can
 * name them like target variables (`_meta.rssi < -120`). `_meta.dataRate` is a name (`SF7BW125`)
 * or an index, depending on the network server: it takes every operator, like `_raw`.
 */
export const META_STATE_TYPES: Readonly<Record<string, 'number' | 'string' | 'boolean' | 'object' | 'any'>> =
  {
    [`${META_STATE_PREFIX}event`]: 'string',
    [`${META_STATE_PREFIX}topic`]: 'string',
    [`${META_STATE_PREFIX}fPort`]: 'number',
    [`${META_STATE_PREFIX}fCnt`]: 'number',
    [`${META_STATE_PREFIX}devEui`]: 'string',
    [`${META_STATE_PREFIX}devAddr`]: 'string',
    [`${META_STATE_PREFIX}confirmed`]: 'boolean',
    [`${META_STATE_PREFIX}receivedAt`]: 'string',
    [`${META_STATE_PREFIX}rssi`]: 'number',
    [`${META_STATE_PREFIX}snr`]: 'number',
    [`${META_STATE_PREFIX}gateway`]: 'string',
    [`${META_STATE_PREFIX}gatewayCount`]: 'number',
    [`${META_STATE_PREFIX}gateways`]: 'object',
    [`${META_STATE_PREFIX}dataRate`]: 'any',
    [`${META_STATE_PREFIX}spreadingFactor`]: 'number',
    [`${META_STATE_PREFIX}bandwidth`]: 'number',
    [`${META_STATE_PREFIX}frequency`]: 'number',
    [`${META_STATE_PREFIX}codingRate`]: 'string',
    [`${META_STATE_PREFIX}battery`]: 'number',
    [`${META_STATE_PREFIX}margin`]: 'number',
    [`${META_STATE_PREFIX}location`]: 'object',
  };

/** Whether a parsed key would land in the reserved metadata prefix (`_meta`, `_meta.…`). */
export const isMetaKey = (key: string): boolean =>
  key.charCodeAt(0) === 95 && (key === '_meta' || key.startsWith(META_STATE_PREFIX));
