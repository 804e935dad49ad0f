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
  firstSteps: {
    heading: 'Erste Schritte',
    hide: 'Erste Schritte ausblenden',
    intro:
      'Diese Anlage hat noch keine Geräte oder digitalen Zwillinge. In dieser Reihenfolge kommen die ersten Werte an:',
    done: 'Erledigt',
    open: 'Noch offen',
    notAllowed: 'Ihre Rollen erlauben diesen Schritt nicht; bitten Sie einen Administrator darum.',
    steps: {
      connector: {
        title: 'Eine Datenquelle anbinden',
        text: 'Pakete kommen über einen Konnektor in Stellwerk an. Der MQTT-Broker der Anlage ist eingebaut: Ein Konnektor der Art „MQTT-Broker“ gibt Geräten eine Anmeldung dafür. LoRaWAN kommt über den Webhook eines Netzwerkservers (The Things Stack, ChirpStack, LORIOT).',
      },
      devices: {
        title: 'Geräte anlegen',
        text: 'Ein Gerät sendet über einen Konnektor unter seiner Geräte-ID. „Neues Gerät“ legt eines an, „CSV importieren“ viele auf einmal.',
      },
      twin: {
        title: 'Einen digitalen Zwilling anlegen',
        text: 'Ein Zwilling steht für einen Ort oder eine Maschine. Geben Sie ihm Datenpunkte, deren Quelle ein Wert eines Geräts ist.',
      },
      use: {
        title: 'Danach: beobachten und reagieren',
        text: 'Zeigen Sie die Datenpunkte des Zwillings auf einem Dashboard, und lassen Sie Regeln Alarme auslösen oder Nachrichten senden.',
      },
    },
    links: {
      connectors: 'Konnektor anlegen',
      devices: 'Geräte anlegen',
      twins: 'Zwilling anlegen',
      dashboards: 'Dashboards',
      rules: 'Regeln',
    },
  },
};
