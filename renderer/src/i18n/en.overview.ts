/** English texts of the overview (home) page (German: de.overview.ts, same keys). */
export const enOverview = {
  heading: 'State of the site',
  updated: 'Updated {time}',
  refresh: 'Refresh',
  devices: 'Devices',
  devicesEmpty: 'No devices yet.',
  connectors: 'Connectors',
  active: 'Active',
  inactive: 'Deactivated',
  ingest: 'Ingest, last hour',
  ingestStored: 'packets stored',
  ingestFailed: '{count} refused',
  ingestRate: '{count} in the current minute',
  ingestChart: 'Packets per minute over the last hour, from {from} to {to}; highest minute {max}.',
  alarms: 'Open alarms',
  recentAlarms: 'Recent alarms',
  noRecentAlarms: 'No open or acknowledged alarms.',
  gateways: 'Gateways offline',
  gatewaysOffline: '{offline} of {total} offline',
  noGatewaysOffline: 'Every gateway is online.',
  noGateways: 'No gateways registered.',
  lastSeen: 'last seen {time}',
  neverSeen: 'never seen',
  /** Filters of the lists the overview links to. */
  listFilters: { allHealth: 'All health states', allStatuses: 'All statuses' },
  nothing: 'Your role shows no parts of the overview. Ask an administrator for read permissions.',
  /** The panel on a site without devices or twins (lib/overview/first-steps.ts). */
  firstSteps: {
    heading: 'First steps',
    hide: 'Hide first steps',
    intro: 'This site has no devices or digital twins yet. In this order, the first values arrive:',
    done: 'Done',
    open: 'Not yet',
    notAllowed: 'Your roles do not allow this step; ask an administrator.',
    steps: {
      connector: {
        title: 'Connect a data source',
        text: 'Packets reach Stellwerk through a connector. The site’s MQTT broker is built in: an “MQTT broker” connector gives devices a login for it. LoRaWAN comes through a network server’s webhook (The Things Stack, ChirpStack, LORIOT).',
      },
      devices: {
        title: 'Add devices',
        text: 'A device sends on a connector under its device id. “New device” creates one, “Import CSV” many at once.',
      },
      twin: {
        title: 'Create a digital twin',
        text: 'A twin stands for a place or a machine. Give it states whose source is a value of a device.',
      },
      use: {
        title: 'Then: watch and react',
        text: 'Show the twin’s states on a dashboard, and let rules raise alarms or send messages.',
      },
    },
    links: {
      connectors: 'Create a connector',
      devices: 'Add devices',
      twins: 'Create a twin',
      dashboards: 'Dashboards',
      rules: 'Rules',
    },
  },
};
