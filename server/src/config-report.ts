import { ENV_VARIABLES, type Config, type ConfigSource } from './config.js';

/**
 * The effective configuration as people read it (the start log line, `stellwerk config`, `stellwerk
 * doctor`): each variable's value and where it came from, with secrets masked. Masked are whole
 * values of variables named like secrets (passwords, tokens, the secret key), passwords in URLs
 * (`DATABASE_URL`, `STELLWERK_SMTP_URL`, time-series targets), secret-sounding query parameters and
 * object fields.
 */

export interface ConfigRow {
  name: string;
  value: string;
  source: ConfigSource;
}

export const MASK = '********';

// Whole values of these are secret; STELLWERK_TOKEN_TTL_SECONDS is a duration, so TOKEN only at the end.
const SECRET_NAME = /PASSWORD|SECRET|_TOKEN$/i;
const SECRET_FIELD = /password|secret|token|apikey|api_key/i;
const URL_PASSWORD = /(\/\/[^/:@\s]*):[^@\s/]*@/g;
const SECRET_QUERY = /([?&](?:token|password|secret|key|apikey|api_key|access_token)=)[^&\s,]*/gi;

export function configReport(config: Config): ConfigRow[] {
  return ENV_VARIABLES.map((v) => ({
    name: v.name,
    value: displayValue(v.name, config[v.key]),
    source: config.origin.sources[v.name] ?? 'default',
  }));
}

/** `{ NAME: "value (source)" }`: one object for a log line. */
export function configLogFields(config: Config): Record<string, string> {
  return Object.fromEntries(configReport(config).map((row) => [row.name, `${row.value} (${row.source})`]));
}

/** The settings file and whether it was there, for the start log and `stellwerk config`. */
export function settingsFileNote(config: Config): string {
  return `${config.origin.settingsFile} (${config.origin.settingsFileFound ? 'read' : 'not present'})`;
}

export function displayValue(name: string, value: unknown): string {
  if (value === undefined || value === null) return 'unset';
  if (SECRET_NAME.test(name)) return MASK;
  return maskText(render(value));
}

export function maskText(text: string): string {
  return text.replace(URL_PASSWORD, `$1:${MASK}@`).replace(SECRET_QUERY, `$1${MASK}`);
}

function render(value: unknown): string {
  if (Buffer.isBuffer(value)) return MASK;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(render).join(', ');
  if (typeof value === 'string') return value;
  // Numbers and booleans print as themselves; objects (the time-series targets) without secret fields.
  return JSON.stringify(withoutSecretFields(value));
}

function withoutSecretFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecretFields);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET_FIELD.test(k) && v !== undefined ? MASK : withoutSecretFields(v),
    ]),
  );
}
