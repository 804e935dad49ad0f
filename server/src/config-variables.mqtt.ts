import path from 'node:path';
import { constant, integer, port, text } from './config-values.js';
import { variable } from './config-variable.js';

/** The embedded MQTT broker's variables (config-variables.ts lists them in this place). */
export const MQTT_VARIABLES = [
  variable({
    name: 'STELLWERK_MQTT_PORT',
    key: 'mqttPort',
    description: 'MQTT port of the embedded broker. 0 picks a free port.',
    defaultText: '`1883`',
    default: constant(1883),
    parse: port,
  }),
  variable({
    name: 'STELLWERK_MQTT_HOST',
    key: 'mqttHost',
    description:
      'Address the embedded broker (TCP and TLS) binds to. MQTT over WebSocket uses the HTTP port at `/mqtt`.',
    defaultText: '`0.0.0.0`',
    default: constant('0.0.0.0'),
    parse: text,
  }),
  variable({
    name: 'STELLWERK_MQTT_TLS_PORT',
    key: 'mqttTlsPort',
    description:
      'MQTT over TLS port of the embedded broker (needs `STELLWERK_MQTT_TLS_CERT` and `STELLWERK_MQTT_TLS_KEY`). 0 picks a free port.',
    defaultText: 'unset: no TLS listener',
    default: constant(undefined),
    parse: (raw, name) => (raw.trim() === '' ? undefined : port(raw, name)),
  }),
  variable({
    name: 'STELLWERK_MQTT_TLS_CERT',
    key: 'mqttTlsCert',
    description: 'PEM file with the certificate (chain) of the MQTT TLS listener.',
    defaultText: 'unset',
    default: constant(undefined),
    parse: (raw) => (raw.trim() === '' ? undefined : path.resolve(raw.trim())),
  }),
  variable({
    name: 'STELLWERK_MQTT_TLS_KEY',
    key: 'mqttTlsKey',
    description: 'PEM file with the private key of the MQTT TLS listener.',
    defaultText: 'unset',
    default: constant(undefined),
    parse: (raw) => (raw.trim() === '' ? undefined : path.resolve(raw.trim())),
  }),
  variable({
    name: 'STELLWERK_MQTT_MAX_PACKET_BYTES',
    key: 'mqttMaxPacketBytes',
    description: 'Largest MQTT packet the broker accepts; a client sending a larger one is disconnected.',
    defaultText: '`262144` (256 KiB)',
    default: constant(262_144),
    parse: integer(1024, 268_435_455),
  }),
  variable({
    name: 'STELLWERK_MQTT_CONNECT_TIMEOUT_MS',
    key: 'mqttConnectTimeoutMs',
    description: 'A connection that has not sent its MQTT CONNECT within this time is closed.',
    defaultText: '`10000`',
    default: constant(10_000),
    parse: integer(100, 600_000),
  }),
  variable({
    name: 'STELLWERK_MQTT_MAX_CONNECTIONS_PER_CONNECTOR',
    key: 'mqttMaxConnectionsPerConnector',
    description:
      'MQTT clients one `mqtt-broker` connector may have connected at once; a connector\'s `maxConnections` setting replaces it for that connector. Beyond it CONNECT is refused ("server unavailable"; MQTT 5: 0x97 quota exceeded) and the connector log says why.',
    defaultText: '`5000`',
    default: constant(5000),
    parse: integer(1, 10_000_000),
  }),
  variable({
    name: 'STELLWERK_MQTT_MAX_CONNECTIONS_PER_ACCOUNT',
    key: 'mqttMaxConnectionsPerAccount',
    description:
      "MQTT clients the connectors of one account and its sub-accounts may have connected at once (the top-level account is bounded by the broker's cap instead). Refused as the per-connector limit.",
    defaultText: '`10000`',
    default: constant(10_000),
    parse: integer(1, 10_000_000),
  }),
  variable({
    name: 'STELLWERK_MQTT_MAX_CONNECTIONS',
    key: 'mqttMaxConnections',
    description:
      'Broker sockets (TCP, TLS, WebSocket, before and after CONNECT) at once, across all tenants. The open-file limit minus `STELLWERK_MQTT_RESERVED_FILES` caps it anyway; beyond the cap new connections are closed at once.',
    defaultText: 'unset: the open-file limit minus the reserve',
    default: constant(undefined),
    parse: (raw, name) => (raw.trim() === '' ? undefined : integer(1, 10_000_000)(raw, name)),
  }),
  variable({
    name: 'STELLWERK_MQTT_RESERVED_FILES',
    key: 'mqttReservedFiles',
    description:
      'File descriptors MQTT connections never take: kept for PostgreSQL connections, HTTP, the packet spool and logs. The open-file limit in force is shown by `GET /xapi/v1/health` (`openFiles`).',
    defaultText: 'unset: `1024`, or half the open-file limit when that is lower',
    default: constant(undefined),
    parse: (raw, name) => (raw.trim() === '' ? undefined : integer(1, 10_000_000)(raw, name)),
  }),
] as const;
