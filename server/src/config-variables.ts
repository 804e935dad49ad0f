import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  defaultDataDir,
  constant,
  email,
  integer,
  logLevel,
  optionalUrl,
  password,
  port,
  text,
  url,
  type LogLevel,
} from './config-values.js';
import {
  DEFAULT_TIMESERIES_TARGETS,
  parseTimeSeriesTargets,
} from './timeseries/timeseries-targets.config.js';
import { variable } from './config-variable.js';
import { MQTT_VARIABLES } from './config-variables.mqtt.js';
import { WEATHER_VARIABLES } from './config-variables.weather.js';
import { LWM2M_VARIABLES } from './config-variables.lwm2m.js';
import { DATABASE_VARIABLES } from './config-variables.database.js';
import { CLUSTER_VARIABLES } from './config-variables.cluster.js';
import { HTTP_VARIABLES, httpsModeOf } from './config-variables.http.js';
import { METRICS_VARIABLES } from './config-variables.metrics.js';
import { BACKUP_VARIABLES } from './config-variables.backup.js';
import { LOGGING_VARIABLES } from './config-variables.logging.js';
import { WEBHOOK_VARIABLES } from './config-variables.webhooks.js';
import { DASHBOARD_VARIABLES } from './config-variables.dashboards.js';
import { EXPORT_VARIABLES } from './config-variables.exports.js';
import { GATEWAY_VARIABLES } from './config-variables.gateways.js';
import { MAP_VARIABLES } from './config-variables.maps.js';
import { parseAllowList } from './outgoing/target-guard.js';
import { parseMapOrigins } from './console/content-security-policy.js';

const apiTimeout = integer(1000, 3_600_000);

/** `<installation>/dist/renderer`: four levels above this file in the sources and in dist/ alike. */
function defaultConsoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.basename(path.resolve(here, '..', '..')) === 'dist' ? '../../..' : '../..';
  return path.resolve(here, root, 'dist', 'renderer');
}

export const ENV_VARIABLES = [
  variable({
    name: 'STELLWERK_DATA_DIR',
    key: 'dataDir',
    description:
      'Data directory (embedded PostgreSQL, secrets key, spool, settings file `stellwerk.conf`). Set in the environment only, since the settings file is read from it.',
    defaultText:
      'root: `/var/lib/stellwerk`; Linux: `$XDG_DATA_HOME/stellwerk`; macOS: `~/Library/Application Support/Stellwerk`; Windows: `%PROGRAMDATA%\\Stellwerk`',
    default: (env) => defaultDataDir(env),
    parse: (raw, name) => path.resolve(text(raw, name)),
  }),
  variable({
    name: 'STELLWERK_HTTP_HOST',
    key: 'httpHost',
    description: 'Address the HTTP server binds to.',
    defaultText: '`0.0.0.0`',
    default: constant('0.0.0.0'),
    parse: text,
  }),
  variable({
    name: 'STELLWERK_HTTP_PORT',
    key: 'httpPort',
    description: 'HTTP port (API, console, health, metrics). 0 picks a free port and logs it.',
    defaultText: '`8080`',
    default: constant(8080),
    parse: port,
  }),
  ...HTTP_VARIABLES,
  ...MQTT_VARIABLES,
  ...GATEWAY_VARIABLES,
  ...MAP_VARIABLES,
  variable({
    name: 'STELLWERK_PG_PORT',
    key: 'pgPort',
    description: 'Port of the embedded PostgreSQL (ignored with `DATABASE_URL`). 0 picks a free port.',
    defaultText: '`5433`',
    default: constant(5433),
    parse: port,
  }),
  variable({
    name: 'DATABASE_URL',
    key: 'databaseUrl',
    description: 'External PostgreSQL (`postgres://user:pass@host:port/db`). Unset: embedded PostgreSQL.',
    defaultText: 'unset',
    default: constant(undefined),
    parse: optionalUrl(['postgres:', 'postgresql:']),
  }),
  ...DATABASE_VARIABLES,
  ...CLUSTER_VARIABLES,
  variable({
    name: 'STELLWERK_PUBLIC_URL',
    key: 'publicUrl',
    description: 'URL users reach Stellwerk through (webhook URLs, OAuth redirect_uri check, links).',
    defaultText: '`http://localhost:<STELLWERK_HTTP_PORT>`; `https://…` with HTTPS',
    default: (env) =>
      `${httpsModeOf(env) === 'off' ? 'http' : 'https'}://localhost:${env.STELLWERK_HTTP_PORT?.trim() || '8080'}`,
    parse: url(['http:', 'https:']),
  }),
  variable({
    name: 'STELLWERK_ADMIN_EMAIL',
    key: 'adminEmail',
    description: 'First admin created on an empty database (with `STELLWERK_ADMIN_PASSWORD`).',
    defaultText: 'unset: a one-time setup token is printed at start',
    default: constant(undefined),
    parse: email,
  }),
  variable({
    name: 'STELLWERK_ADMIN_PASSWORD',
    key: 'adminPassword',
    description: 'Password of that first admin (at least 12 characters).',
    defaultText: 'unset',
    default: constant(undefined),
    parse: password,
  }),
  variable({
    name: 'STELLWERK_LOG_LEVEL',
    key: 'logLevel',
    description: 'fatal, error, warn, info, debug, trace or silent.',
    defaultText: '`info`',
    default: constant<LogLevel>('info'),
    parse: logLevel,
  }),
  ...LOGGING_VARIABLES,
  variable({
    name: 'STELLWERK_NODE_NAME',
    key: 'nodeName',
    description: 'Name of this server node in `/xapi/v1/health`.',
    defaultText: 'host name and process id',
    default: () => `${os.hostname()}-${process.pid}`,
    parse: text,
  }),
  ...METRICS_VARIABLES,
  variable({
    name: 'STELLWERK_BODY_LIMIT_BYTES',
    key: 'bodyLimitBytes',
    description:
      'Largest accepted request body; larger bodies get 413. A `text/csv` device import is streamed and may be up to 32 MiB.',
    defaultText: '`1048576`',
    default: constant(1_048_576),
    parse: integer(1024, 1_073_741_824),
  }),
  variable({
    name: 'STELLWERK_RATE_LIMIT_MAX',
    key: 'rateLimitMax',
    description:
      'API calls allowed per client (user, API key, or client address when there is no valid credential) per window; then 429.',
    defaultText: '`1200`',
    default: constant(1200),
    parse: integer(1, 10_000_000),
  }),
  variable({
    name: 'STELLWERK_RATE_LIMIT_WINDOW_MS',
    key: 'rateLimitWindowMs',
    description: 'Length of the rate-limit window in milliseconds.',
    defaultText: '`60000`',
    default: constant(60_000),
    parse: integer(100, 86_400_000),
  }),
  ...WEBHOOK_VARIABLES,
  ...WEATHER_VARIABLES,
  ...LWM2M_VARIABLES,
  ...DASHBOARD_VARIABLES,
  ...EXPORT_VARIABLES,
  variable({
    name: 'STELLWERK_AUTH_FAILURES_PER_ADDRESS',
    key: 'authFailuresPerAddress',
    description:
      'Requests with an invalid token or API key one client address may send per rate-limit window; then 429.',
    defaultText: '`100`',
    default: constant(100),
    parse: integer(1, 10_000_000),
  }),
  variable({
    name: 'STELLWERK_INGEST_MAX_PENDING',
    key: 'ingestMaxPending',
    description:
      'Packets accepted (in the spool) but not yet stored in PostgreSQL; beyond it new packets are refused (not acknowledged) until the backlog drains.',
    defaultText: '`100000`',
    default: constant(100_000),
    parse: integer(100, 10_000_000),
  }),
  variable({
    name: 'STELLWERK_SPOOL_DIR',
    key: 'spoolDir',
    description:
      'Packet spool: packets are acknowledged once written and synced here, then moved into PostgreSQL (docs/adr/0103). One server per directory.',
    defaultText: '`<STELLWERK_DATA_DIR>/spool`',
    default: (env) =>
      path.join(env.STELLWERK_DATA_DIR ? path.resolve(env.STELLWERK_DATA_DIR) : defaultDataDir(env), 'spool'),
    parse: (raw, name) => path.resolve(text(raw, name)),
  }),
  ...BACKUP_VARIABLES,
  variable({
    name: 'STELLWERK_INGEST_WORKER_NICE',
    key: 'ingestWorkerNice',
    description:
      'Nice value (Linux) of the ingest worker thread that stores and processes spooled packets: under overload, accepting packets keeps the CPU and processing catches up afterwards. 0 leaves its priority as it is.',
    defaultText: '`10`',
    default: constant(10),
    parse: integer(0, 19),
  }),
  variable({
    name: 'STELLWERK_INGEST_BATCH_SIZE',
    key: 'ingestBatchSize',
    description:
      "Packets the ingest worker processes in one transaction while it keeps up (ten times as many while it catches up). A batch writes each device state, last-seen time and twin state once, however many of the batch's packets set it.",
    defaultText: '`1000`',
    default: constant(1000),
    parse: integer(1, 100_000),
  }),
  variable({
    name: 'STELLWERK_INGEST_COMMIT_INTERVAL_MS',
    key: 'ingestCommitIntervalMs',
    description:
      'The ingest worker commits at most this often while less than a batch waits. Packets are acknowledged and shown live on arrival; stored device and twin states, points, rules and alarms follow by up to this much.',
    defaultText: '`100`',
    default: constant(100),
    parse: integer(0, 10_000),
  }),
  variable({
    name: 'STELLWERK_LOGIN_MAX_FAILURES',
    key: 'loginMaxFailures',
    description: 'Failed logins per account (e-mail) before logins to it are refused for a while.',
    defaultText: '`10`',
    default: constant(10),
    parse: integer(1, 1000),
  }),
  variable({
    name: 'STELLWERK_LOGIN_MAX_FAILURES_PER_CLIENT',
    key: 'loginMaxFailuresPerClient',
    description: 'Failed logins per client address (any e-mail) before that address is refused for a while.',
    defaultText: '`50`',
    default: constant(50),
    parse: integer(1, 100_000),
  }),
  variable({
    name: 'STELLWERK_LOGIN_LOCK_MS',
    key: 'loginLockMs',
    description: 'How long logins stay refused after too many failures, in milliseconds.',
    defaultText: '`900000` (15 min)',
    default: constant(900_000),
    parse: integer(1000, 86_400_000),
  }),
  variable({
    name: 'STELLWERK_TOKEN_TTL_SECONDS',
    key: 'tokenTtlSeconds',
    description: 'Lifetime of bearer tokens from `POST /xapi/v1/auth/login`.',
    defaultText: '`43200` (12 h)',
    default: constant(43_200),
    parse: integer(60, 31_536_000),
  }),
  variable({
    name: 'STELLWERK_SESSION_TTL_SECONDS',
    key: 'sessionTtlSeconds',
    description: 'Lifetime of console cookie sessions.',
    defaultText: '`43200` (12 h)',
    default: constant(43_200),
    parse: integer(60, 31_536_000),
  }),
  variable({
    name: 'STELLWERK_HEARTBEAT_INTERVAL_MS',
    key: 'heartbeatIntervalMs',
    description: 'How often each node writes its heartbeat to PostgreSQL.',
    defaultText: '`10000`',
    default: constant(10_000),
    parse: integer(100, 600_000),
  }),
  variable({
    name: 'STELLWERK_NODE_FAULTY_AFTER_MS',
    key: 'nodeFaultyAfterMs',
    description: 'A node silent for this long is reported faulty by `/xapi/v1/health`.',
    defaultText: '`10000`',
    default: constant(10_000),
    parse: integer(100, 3_600_000),
  }),
  variable({
    name: 'STELLWERK_SHUTDOWN_GRACE_MS',
    key: 'shutdownGraceMs',
    description: 'How long a shutdown waits for open requests to finish.',
    defaultText: '`10000`',
    default: constant(10_000),
    parse: integer(0, 600_000),
  }),
  variable({
    name: 'STELLWERK_SECRET_KEY',
    key: 'secretKey',
    description:
      'Key (32 bytes, base64) that encrypts TOTP seeds and OAuth client secrets. Every node of one database needs the same key.',
    defaultText: 'generated once into `<STELLWERK_DATA_DIR>/secret.key`',
    default: constant(undefined),
    parse: (raw, name) => {
      const key = Buffer.from(raw.trim(), 'base64');
      if (key.length !== 32) throw new ConfigError(name, 'must be 32 bytes encoded as base64');
      return key;
    },
  }),
  variable({
    name: 'STELLWERK_SMTP_URL',
    key: 'smtpUrl',
    description:
      'SMTP server for mail (`smtp://user:pass@host:587`, `smtps://…:465`). Unset: no mail is sent; invitation links are logged and shown to the admin who invited, to hand over.',
    defaultText: 'unset',
    default: constant(undefined),
    parse: optionalUrl(['smtp:', 'smtps:']),
  }),
  variable({
    name: 'STELLWERK_MAIL_FROM',
    key: 'mailFrom',
    description: 'Sender of mail from Stellwerk (`Name <address>` or an address).',
    defaultText: '`Stellwerk <no-reply@localhost>`',
    default: constant('Stellwerk <no-reply@localhost>'),
    parse: text,
  }),
  variable({
    name: 'STELLWERK_MAX_CONCURRENT_JOBS',
    key: 'maxConcurrentJobs',
    description: 'Background jobs (imports, template synchronisation) one node runs at the same time.',
    defaultText: '`2`',
    default: constant(2),
    parse: integer(1, 100),
  }),
  variable({
    name: 'STELLWERK_PACKET_HISTORY_LIMIT',
    key: 'packetHistoryLimit',
    description: 'Packets per device the packet history shows; the list says when older packets exist.',
    defaultText: '`200`',
    default: constant(200),
    parse: integer(50, 100_000),
  }),
  variable({
    name: 'STELLWERK_GEOCODER_URL',
    key: 'geocoderUrl',
    description:
      'Nominatim-compatible geocoder (`https://nominatim.openstreetmap.org`) for `?geocode=true` on digital twins. Unset: geocoding is off (offline sites) and such requests answer 422 `GEOCODER_NOT_CONFIGURED`.',
    defaultText: 'unset',
    default: constant(undefined),
    parse: optionalUrl(['http:', 'https:']),
  }),
  variable({
    name: 'STELLWERK_CONSOLE_DIR',
    key: 'consoleDir',
    description:
      'Folder of the built web console that the server serves at `/` (`npm run build` writes it). Missing: `/` says how to build it.',
    defaultText: '`dist/renderer` of the installation',
    default: () => defaultConsoleDir(),
    parse: (raw, name) => path.resolve(text(raw, name)),
  }),
  variable({
    name: 'STELLWERK_API_TIMEOUT_MS',
    key: 'apiTimeoutMs',
    description:
      'Time the web console waits for an API answer before it reports a timeout. `VUE_APP_API_TIMEOUT_MS` (the name in the interface specification) is read when this is unset.',
    defaultText: '`VUE_APP_API_TIMEOUT_MS`, else `30000`',
    default: (env) =>
      env.VUE_APP_API_TIMEOUT_MS === undefined
        ? 30_000
        : apiTimeout(env.VUE_APP_API_TIMEOUT_MS, 'VUE_APP_API_TIMEOUT_MS'),
    parse: apiTimeout,
  }),
  variable({
    name: 'STELLWERK_MAP_ORIGINS',
    key: 'mapOrigins',
    description:
      "Origins (`https://tiles.example.com`, comma-separated) of tile servers the console's map may load a basemap style, `.pmtiles` archive, tiles, glyphs and sprites from; added to the console's content security policy. Unset: only this server, e.g. files in `<STELLWERK_DATA_DIR>/maps/` served at `/maps/…` (docs/console.md).",
    defaultText: 'unset (this server only)',
    default: constant([]),
    parse: parseMapOrigins,
  }),
  variable({
    name: 'STELLWERK_TIMESERIES_TARGETS',
    key: 'timeseriesTargets',
    description:
      'Where state history is stored, comma-separated; the first is the primary (serves reads), the others secondaries: `postgres`, `influxdb-v1+http://user:pass@host:8086/db`, `influxdb-v2+http://host:8086/?org=…&bucket=…&token=…`, `victoria-metrics+http://host:8428`; options `name=`, `measurement=` (docs/timeseries.md).',
    defaultText: '`postgres`',
    default: () => DEFAULT_TIMESERIES_TARGETS,
    parse: parseTimeSeriesTargets,
  }),
  variable({
    name: 'STELLWERK_OUTGOING_ALLOW_PRIVATE',
    key: 'outgoingAllowPrivate',
    description:
      'Loopback, private, link-local or unique-local addresses that targets set by tenants may reach: the brokers and endpoints of connectors (mqtt-in, webhook-out, mqtt-out, kafka-out, smtp-mail and its OAuth token endpoint) and the OAuth provider of an account. Comma-separated CIDR ranges (`10.0.0.0/8`, `fd00::/8`), addresses or host names; `*` allows every address. Unset: such targets are refused (SSRF protection). An on-site MQTT broker is usually private: allow its address or range, e.g. `192.168.10.5` or `10.20.0.0/16` (docs/outgoing-connectors.md).',
    defaultText: 'unset (none)',
    default: constant([]),
    parse: parseAllowList,
  }),
] as const;
