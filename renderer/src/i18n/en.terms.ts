/**
 * English names of values the server stores in English (health states, packet statuses, value
 * types, alarm categories), the words for values, and the time-zone choice (German: de.terms.ts,
 * same keys). A stored value without an entry is shown as it is stored.
 */
export const enTerms = {
  values: { true: 'true', false: 'false', none: '—' },
  /** Device health states: the server's own and the ones driver rules commonly set. */
  health: {
    Alarm: 'Alarm',
    Critical: 'Critical',
    Degraded: 'Degraded',
    Error: 'Error',
    Healthy: 'Healthy',
    Offline: 'Offline',
    Silent: 'Silent',
    Unknown: 'Unknown',
    Warning: 'Warning',
  } as Record<string, string>,
  packetStatus: {
    'device-inactive': 'device inactive',
    failed: 'failed',
    'parse-error': 'parse error',
    parsed: 'parsed',
    'unknown-device': 'unknown device',
  } as Record<string, string>,
  valueTypes: {
    boolean: 'Boolean',
    integer: 'Integer',
    number: 'Number',
    object: 'Object',
    string: 'Text',
  } as Record<string, string>,
  /** Categories the server writes; a rule's own category is shown as written. */
  alarmCategories: {
    Gerätezustand: 'Device health',
    Konnektorüberwachung: 'Connector monitoring',
    Rule: 'Rule',
  } as Record<string, string>,
  timeZone: {
    label: 'Time zone',
    account: 'Account time ({zone})',
    browser: 'This computer ({zone})',
    utc: 'UTC',
  },
};
