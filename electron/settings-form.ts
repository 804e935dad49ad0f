import path from 'node:path';
import type { ConfChanges } from './conf-file.js';
import { serverHttpsMode } from './server-https.js';

/**
 * What the settings window shows and saves: the form's values, read from stellwerk.conf under the
 * environment (the environment wins, as in the server), checked here in the main process, and
 * turned into the conf changes. The page only displays; nothing it sends is trusted unchecked.
 */

export const HTTPS_MODES = ['off', 'self-signed', 'files'] as const;
export type HttpsMode = (typeof HTTPS_MODES)[number];

export interface SettingsValues {
  httpPort: string;
  mqttPort: string;
  dataDir: string;
  /** Empty: the server's default (`http://localhost:<HTTP port>`). */
  publicUrl: string;
  https: HttpsMode;
  certFile: string;
  keyFile: string;
}

export type SettingsField = keyof SettingsValues;

/** The variable behind each field; the data directory is located before the file (see settingsView). */
export const FIELD_VARIABLES: Record<SettingsField, string> = {
  httpPort: 'STELLWERK_HTTP_PORT',
  mqttPort: 'STELLWERK_MQTT_PORT',
  dataDir: 'STELLWERK_DATA_DIR',
  publicUrl: 'STELLWERK_PUBLIC_URL',
  https: 'STELLWERK_HTTPS',
  certFile: 'STELLWERK_HTTPS_CERT',
  keyFile: 'STELLWERK_HTTPS_KEY',
};

export const DEFAULT_HTTP_PORT = '8080';
export const DEFAULT_MQTT_PORT = '1883';

export interface SettingsView {
  values: SettingsValues;
  /** Fields fixed by an environment variable: the file's value would not apply, so they are read-only. */
  fromEnvironment: SettingsField[];
  confFile: string;
}

const pick = (name: string, env: NodeJS.ProcessEnv, conf: Record<string, string>) =>
  env[name]?.trim() || conf[name]?.trim() || '';

/**
 * The mode the server will serve, by its own rule: the form must not show `files` for an explicit
 * `STELLWERK_HTTPS=off` beside a certificate, or saving it unchanged would switch HTTPS on. A value
 * the server refuses shows as off, so saving repairs it.
 */
function httpsMode(env: NodeJS.ProcessEnv, conf: Record<string, string>): HttpsMode {
  const mode = serverHttpsMode(env, conf);
  if (mode === 'self-signed') return 'self-signed';
  return mode === 'on' ? 'files' : 'off';
}

/** The form as the effective configuration has it: environment over file over default. */
export function settingsView(
  env: NodeJS.ProcessEnv,
  conf: Record<string, string>,
  dataDir: string,
  confFile: string,
): SettingsView {
  const fromEnvironment = (Object.keys(FIELD_VARIABLES) as SettingsField[]).filter((field) => {
    if (field === 'https')
      return ['STELLWERK_HTTPS', 'STELLWERK_HTTPS_CERT', 'STELLWERK_HTTPS_KEY'].some((n) => env[n]?.trim());
    return Boolean(env[FIELD_VARIABLES[field]]?.trim());
  });
  return {
    values: {
      httpPort: pick('STELLWERK_HTTP_PORT', env, conf) || DEFAULT_HTTP_PORT,
      mqttPort: pick('STELLWERK_MQTT_PORT', env, conf) || DEFAULT_MQTT_PORT,
      dataDir,
      publicUrl: pick('STELLWERK_PUBLIC_URL', env, conf),
      https: httpsMode(env, conf),
      certFile: pick('STELLWERK_HTTPS_CERT', env, conf),
      keyFile: pick('STELLWERK_HTTPS_KEY', env, conf),
    },
    fromEnvironment,
    confFile,
  };
}

export type SettingsErrors = Partial<Record<SettingsField, string>>;

export type SettingsCheck = { ok: true; values: SettingsValues } | { ok: false; errors: SettingsErrors };

export interface CheckContext {
  /** Whether a file exists and can be read (certificate and key). */
  isReadableFile: (file: string) => boolean;
  /**
   * Fields fixed by the environment: not written, so not checked either (an odd value there is
   * the environment's business and must not block saving the other fields).
   */
  fixed?: SettingsField[];
}

const asText = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

function portError(raw: string): string | undefined {
  if (!/^\d+$/.test(raw)) return 'a whole number from 1 to 65535';
  const port = Number(raw);
  // 0 ("any free port") is refused: the window and the tray need to know where the server is.
  return port >= 1 && port <= 65535 ? undefined : 'a whole number from 1 to 65535';
}

function urlError(raw: string): string | undefined {
  if (raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'a full URL such as https://stellwerk.example.com';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must start with http:// or https://';
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.search || url.hash) return 'must not contain ? or #';
  return undefined;
}

/** Checks what the page sent (untrusted input) and returns clean values or a message per field. */
export function checkSettings(input: unknown, context: CheckContext): SettingsCheck {
  const raw = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const https = asText(raw.https) as HttpsMode;
  const values: SettingsValues = {
    httpPort: asText(raw.httpPort),
    mqttPort: asText(raw.mqttPort),
    dataDir: asText(raw.dataDir),
    publicUrl: asText(raw.publicUrl).replace(/\/+$/, ''),
    https,
    certFile: asText(raw.certFile),
    keyFile: asText(raw.keyFile),
  };
  const errors: SettingsErrors = {};
  const httpPort = portError(values.httpPort);
  if (httpPort) errors.httpPort = httpPort;
  const mqttPort = portError(values.mqttPort);
  if (mqttPort) errors.mqttPort = mqttPort;
  if (!errors.httpPort && !errors.mqttPort && values.httpPort === values.mqttPort)
    errors.mqttPort = 'must differ from the HTTP port';
  if (!path.isAbsolute(values.dataDir)) errors.dataDir = 'a full folder path';
  const url = urlError(values.publicUrl);
  if (url) errors.publicUrl = url;
  if (!HTTPS_MODES.includes(https)) errors.https = 'off, self-signed or certificate files';
  if (https === 'files') {
    for (const field of ['certFile', 'keyFile'] as const) {
      if (!path.isAbsolute(values[field])) errors[field] = 'a full file path';
      else if (!context.isReadableFile(values[field])) errors[field] = 'no readable file there';
    }
  }
  for (const field of context.fixed ?? []) {
    delete errors[field];
    if (field === 'https') {
      delete errors.certFile;
      delete errors.keyFile;
    }
  }
  return Object.keys(errors).length === 0 ? { ok: true, values } : { ok: false, errors };
}

/**
 * The conf lines for checked values, leaving out fields fixed by the environment (writing them
 * would change nothing). The data directory is not among them: it says where the file is.
 */
export function confChanges(values: SettingsValues, fromEnvironment: SettingsField[]): ConfChanges {
  const all: Array<[SettingsField, ConfChanges]> = [
    ['httpPort', { STELLWERK_HTTP_PORT: values.httpPort }],
    ['mqttPort', { STELLWERK_MQTT_PORT: values.mqttPort }],
    ['publicUrl', { STELLWERK_PUBLIC_URL: values.publicUrl || undefined }],
    [
      'https',
      {
        STELLWERK_HTTPS: values.https === 'self-signed' ? 'self-signed' : undefined,
        STELLWERK_HTTPS_CERT: values.https === 'files' ? values.certFile : undefined,
        STELLWERK_HTTPS_KEY: values.https === 'files' ? values.keyFile : undefined,
      },
    ],
  ];
  return Object.assign(
    {},
    ...all.filter(([field]) => !fromEnvironment.includes(field)).map(([, c]) => c),
  ) as ConfChanges;
}
