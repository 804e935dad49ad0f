import { ConfigError, type LogLevel } from './config-values.js';
import type { TimeSeriesTargetSpec } from './timeseries/timeseries-targets.config.js';
import { ENV_VARIABLES } from './config-variables.js';
import { checkHttpConfig, type HttpsMode } from './config-variables.http.js';

export { ConfigError, defaultDataDir, type LogLevel } from './config-values.js';
export { ENV_VARIABLES } from './config-variables.js';
/**
 * The one place that reads `process.env`. Every variable is declared once in `ENV_VARIABLES`
 * with its default and description; the README table is generated from the same list
 * (`npm run docs:env`) and a unit test fails when the two disagree.
 */

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
  mqttConnectTimeoutMs: number;
  mqttMaxConnectionsPerConnector: number;
  mqttMaxConnectionsPerAccount: number;
  mqttMaxConnections: number | undefined;
  mqttReservedFiles: number | undefined;
  pgPort: number;
  databaseUrl: string | undefined;
  pgRestartAttempts: number;
  publicUrl: string;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  logLevel: LogLevel;
  nodeName: string;
  /** Bearer token `/metrics` requires, when set. */
  metricsToken: string | undefined;
  bodyLimitBytes: number;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  authFailuresPerAddress: number;
  ingestMaxPending: number;
  spoolDir: string;
  /** Cron expression of scheduled backups; undefined: none (config-variables.backup.ts). */
  backupSchedule: string | undefined;
  backupKeep: number;
  backupDir: string;
  ingestWorkerNice: number;
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
}

/** Reads and validates the environment; throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const v of ENV_VARIABLES) {
    const raw = env[v.name];
    config[v.key] = raw === undefined ? v.default(env) : v.parse(raw, v.name);
  }
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
  if (result.adminEmail && !result.adminPassword) {
    throw new ConfigError('STELLWERK_ADMIN_PASSWORD', 'must be set when STELLWERK_ADMIN_EMAIL is set');
  }
  return result;
}
