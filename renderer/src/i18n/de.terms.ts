import type { Messages } from './en';

export const deTerms: Messages['terms'] = {
  values: { true: 'wahr', false: 'falsch', none: '—' },
  health: {
    Alarm: 'Alarm',
    Critical: 'Kritisch',
    Degraded: 'Beeinträchtigt',
    Error: 'Fehler',
    Healthy: 'Gesund',
    Offline: 'Offline',
    Silent: 'Stumm',
    Unknown: 'Unbekannt',
    Warning: 'Warnung',
  },
  packetStatus: {
    'device-inactive': 'Gerät inaktiv',
    failed: 'fehlgeschlagen',
    'parse-error': 'Parserfehler',
    parsed: 'verarbeitet',
    'unknown-device': 'unbekanntes Gerät',
  },
  valueTypes: {
    boolean: 'Wahrheitswert',
    integer: 'Ganzzahl',
    number: 'Zahl',
    object: 'Objekt',
    string: 'Text',
  },
  alarmCategories: {
    Gerätezustand: 'Gerätezustand',
    Konnektorüberwachung: 'Konnektorüberwachung',
    Rule: 'Regel',
  },
  timeZone: {
    label: 'Zeitzone',
    account: 'Zeit des Kontos ({zone})',
    browser: 'Dieser Computer ({zone})',
    utc: 'UTC',
  },
};
