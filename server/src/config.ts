import path from 'node:path';
import type { PortRanges } from './config-variables.lwm2m.js';
import { ENVIRONMENT_ONLY, readSettingsFile, settingsFilePath } from './config-file.js';
import { ConfigError, defaultDataDir, type LogLevel } from './config-values.js';
import type { LogFormatSetting } from './config-variables.logging.js';
import type { TimeSeriesTargetSpec } from './timeseries/timeseries-targets.config.js';
import { ENV_VARIABLES } from './config-variables.js';
import { checkHttpConfig, type HttpsMode } from './config-variables.http.js';

export { ConfigError, defaultDataDir, type LogLevel } from './config-values.js';
export { ENV_VARIABLES } from './config-variables.js';
/**
 * The one place that reads `process.env` and the settings file `<data dir>/stellwerk.conf`
 * (config-file.ts). Every variable is declared once in `ENV_VARIABLES` with its default and
 * description; the README table is generated from the same list (`npm run docs:env`) and a unit
 * test fails when the two disagree.
 */

/** Where an effective value came from: the environment wins over the settings file over the default. */
export type ConfigSource = 'env' | 'file' | 'default';

export interface ConfigOrigin {
  /** `<data dir>/stellwerk.conf`, whether or not it exists. */
  settingsFile: string;
  settingsFileFound: boolean;
  /** By variable name (`STELLWERK_HTTP_PORT`). */
  sources: Record<string, ConfigSource>;
}

export interface Config {
  dataDir: string;
  httpHost: string;
  httpPort: number;
  https: HttpsMode;
  httpsCert: string | undefined;
  httpsKey: string | undefined;
  httpRedirectPort: number | undefined;
  hstsMaxAge: number;
  /** Reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed (Fastify's trustProxy). */
  trustProxy: string[];
  mqttPort: number;
  mqttHost: string;
  mqttTlsPort: number | undefined;
  mqttTlsCert: string | undefined;
  mqttTlsKey: string | undefined;
  mqttMaxPacketBytes: number;
  gatewayOfflineAfterSeconds: number;
  gatewayFiguresDays: number;
  basemapMaxBytes: number;
  sitePlanMaxBytes: number;
  mqttConnectTimeoutMs: number;
  mqttMaxConnectionsPerConnector: number;
  mqttMaxConnectionsPerAccount: number;
  mqttMaxConnections: number | undefined;
  mqttReservedFiles: number | undefined;
  pgPort: number;
  databaseUrl: string | undefined;
  /** Cluster mode's shared Redis (config-variables.cluster.ts); undefined: a single node. */
  redisUrl: string | undefined;
  pgRestartAttempts: number;
  publicUrl: string;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  logLevel: LogLevel;
  logFormat: LogFormatSetting;
  nodeName: string;
  /** Bearer token `/metrics` requires, when set. */
  metricsToken: string | undefined;
  bodyLimitBytes: number;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** Requests per minute and incoming-webhook connector (config-variables.webhooks.ts). */
  webhookRateLimit: number;
  /** Shortest poll interval of weather connectors (config-variables.weather.ts). */
  weatherMinIntervalSeconds: number;
  /** UDP ports and addresses LwM2M connectors may listen on (config-variables.lwm2m.ts). */
  lwm2mPorts: PortRanges;
  lwm2mBindAddresses: string[];
  /** Requests per minute, client address and public dashboard (config-variables.dashboards.ts). */
  publicDashboardRateLimit: number;
  /** Export e-mails: attachment size limit and link lifetime (config-variables.exports.ts). */
  exportMailAttachmentMaxBytes: number;
  exportLinkHours: number;
  authFailuresPerAddress: number;
  ingestMaxPending: number;
  spoolDir: string;
  /** Cron expression of scheduled backups; undefined: none (config-variables.backup.ts). */
  backupSchedule: string | undefined;
  backupKeep: number;
  backupDir: string;
  ingestWorkerNice: number;
  ingestBatchSize: number;
  ingestCommitIntervalMs: number;
  loginMaxFailures: number;
  loginMaxFailuresPerClient: number;
  loginLockMs: number;
  tokenTtlSeconds: number;
  sessionTtlSeconds: number;
  heartbeatIntervalMs: number;
  nodeFaultyAfterMs: number;
  shutdownGraceMs: number;
  secretKey: Buffer | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  maxConcurrentJobs: number;
  packetHistoryLimit: number;
  geocoderUrl: string | undefined;
  timeseriesTargets: TimeSeriesTargetSpec[];
  consoleDir: string;
  apiTimeoutMs: number;
  /** Origins of a site's tile server the console's map may fetch from (its content security policy). */
  mapOrigins: string[];
  /** Private, loopback and link-local targets outgoing connectors may reach (server/src/outgoing/target-guard.ts). */
  outgoingAllowPrivate: string[];
  /** Where each value came from, for the start log, `stellwerk config` and `stellwerk doctor`. */
  origin: ConfigOrigin;
}

/**
 * Reads and validates the environment and the settings file; throws `ConfigError` naming the first
 * bad variable (and, for a value from the file, its line). The data directory, and so the file,
 * comes from the environment or the default only.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDirRaw = env[ENVIRONMENT_ONLY];
  const dataDir = dataDirRaw === undefined ? defaultDataDir(env) : path.resolve(dataDirRaw.trim());
  const known = new Set(ENV_VARIABLES.map((v) => v.name));
  // A blank STELLWERK_DATA_DIR is refused below, by name; there is no file to look for.
  const file =
    dataDirRaw?.trim() === ''
      ? { path: '', found: false, values: new Map<string, { value: string; line: number }>() }
      : readSettingsFile(settingsFilePath(dataDir), known);
  // Defaults that derive from other variables (the spool under the data directory, the public URL
  // from the HTTP port) see the file's values too.
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const [name, { value }] of file.values) if (merged[name] === undefined) merged[name] = value;

  const config: Partial<Record<keyof Config, unknown>> = {};
  const sources: Record<string, ConfigSource> = {};
  for (const v of ENV_VARIABLES) {
    const fromFile = file.values.get(v.name);
    const source: ConfigSource = env[v.name] !== undefined ? 'env' : fromFile ? 'file' : 'default';
    sources[v.name] = source;
    const raw = merged[v.name];
    const name = source === 'file' ? `${v.name} (${file.path} line ${fromFile!.line})` : v.name;
    config[v.key] = raw === undefined ? v.default(merged) : v.parse(raw, name);
  }
  config.origin = { settingsFile: file.path, settingsFileFound: file.found, sources } satisfies ConfigOrigin;
  const result = config as Config;
  if (result.adminPassword && !result.adminEmail) {
    throw new ConfigError('STELLWERK_ADMIN_EMAIL', 'must be set when STELLWERK_ADMIN_PASSWORD is set');
  }
  if (result.mqttTlsPort !== undefined && (!result.mqttTlsCert || !result.mqttTlsKey)) {
    throw new ConfigError(
      'STELLWERK_MQTT_TLS_PORT',
      'needs STELLWERK_MQTT_TLS_CERT and STELLWERK_MQTT_TLS_KEY (PEM files)',
    );
  }
  checkHttpConfig(result);
  if (result.redisUrl !== undefined && result.databaseUrl === undefined) {
    // Each node's embedded PostgreSQL would be a database of its own: the nodes would share nothing.
    throw new ConfigError(
      'STELLWERK_REDIS_URL',
      'cluster mode needs DATABASE_URL: one PostgreSQL for every node',
    );
  }
  if (result.adminEmail && !result.adminPassword) {
    throw new ConfigError('STELLWERK_ADMIN_PASSWORD', 'must be set when STELLWERK_ADMIN_EMAIL is set');
  }
  return result;
}
