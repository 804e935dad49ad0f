import type { enOverview } from './en.overview';

/** Deutsche Texte der Übersicht (Startseite); gleiche Schlüssel wie en.overview.ts. */
export const deOverview: typeof enOverview = {
  heading: 'Zustand der Anlage',
  updated: 'Aktualisiert {time}',
  refresh: 'Aktualisieren',
  devices: 'Geräte',
  devicesEmpty: 'Noch keine Geräte.',
  connectors: 'Konnektoren',
  active: 'Aktiv',
  inactive: 'Deaktiviert',
  ingest: 'Empfang, letzte Stunde',
  ingestStored: 'Pakete gespeichert',
  ingestFailed: '{count} abgewiesen',
  ingestRate: '{count} in der laufenden Minute',
  ingestChart: 'Pakete pro Minute in der letzten Stunde, von {from} bis {to}; höchste Minute {max}.',
  alarms: 'Offene Alarme',
  recentAlarms: 'Neueste Alarme',
  noRecentAlarms: 'Keine offenen oder bestätigten Alarme.',
  gateways: 'Gateways offline',
  gatewaysOffline: '{offline} von {total} offline',
  noGatewaysOffline: 'Alle Gateways sind online.',
  noGateways: 'Keine Gateways registriert.',
  lastSeen: 'zuletzt {time}',
  neverSeen: 'nie gesehen',
  listFilters: { allHealth: 'Alle Gesundheitszustände', allStatuses: 'Alle Status' },
  nothing:
    'Ihre Rolle zeigt keine Teile der Übersicht. Bitten Sie einen Administrator um Leseberechtigungen.',
};
