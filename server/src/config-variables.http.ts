import path from 'node:path';
import { ConfigError, constant, integer, port } from './config-values.js';
import { variable } from './config-variable.js';
import type { Config } from './config.js';
import { parseTrustedProxies } from './platform/http/trusted-proxies.js';

/** HTTPS on the HTTP port, the redirect listener and reverse proxies (config-variables.ts lists them after the port). */

export type HttpsMode = 'off' | 'on' | 'self-signed';
const HTTPS_MODES: HttpsMode[] = ['off', 'on', 'self-signed'];

const optionalPath = (raw: string) => (raw.trim() === '' ? undefined : path.resolve(raw.trim()));

/** The mode the environment asks for; `on` by default once a certificate file is named. */
export function httpsModeOf(env: NodeJS.ProcessEnv): HttpsMode {
  const raw = env.STELLWERK_HTTPS?.trim().toLowerCase();
  if (raw) return parseHttpsMode(raw, 'STELLWERK_HTTPS');
  return env.STELLWERK_HTTPS_CERT?.trim() ? 'on' : 'off';
}

function parseHttpsMode(raw: string, name: string): HttpsMode {
  const value = raw.trim().toLowerCase() as HttpsMode;
  if (!HTTPS_MODES.includes(value)) throw new ConfigError(name, `must be one of ${HTTPS_MODES.join(', ')}`);
  return value;
}

export const HTTP_VARIABLES = [
  variable({
    name: 'STELLWERK_HTTPS',
    key: 'https',
    description:
      "`on`: the HTTP port serves HTTPS with `STELLWERK_HTTPS_CERT` and `STELLWERK_HTTPS_KEY` (API, console, live WebSocket, MQTT over WebSocket at `/mqtt`). `self-signed`: with a certificate the server makes on first start in `<STELLWERK_DATA_DIR>/tls/` (valid for localhost, this host name and its addresses and the public URL's host; renewed at start 30 days before it expires; its SHA-256 fingerprint is logged at every start). `off`: plain HTTP (docs/operations.md#https).",
    defaultText: '`on` when `STELLWERK_HTTPS_CERT` is set, else `off`',
    default: httpsModeOf,
    parse: parseHttpsMode,
  }),
  variable({
    name: 'STELLWERK_HTTPS_CERT',
    key: 'httpsCert',
    description:
      'PEM file with the HTTPS certificate, followed by its intermediate certificates. Re-read with the key on SIGHUP (`systemctl reload stellwerk`).',
    defaultText: 'unset',
    default: constant(undefined),
    parse: optionalPath,
  }),
  variable({
    name: 'STELLWERK_HTTPS_KEY',
    key: 'httpsKey',
    description: 'PEM file with the private key of `STELLWERK_HTTPS_CERT` (unencrypted; keep it mode 600).',
    defaultText: 'unset',
    default: constant(undefined),
    parse: optionalPath,
  }),
  variable({
    name: 'STELLWERK_HTTP_REDIRECT_PORT',
    key: 'httpRedirectPort',
    description:
      'With HTTPS: a plain-HTTP port on `STELLWERK_HTTP_HOST` that answers every request with 308 to the same path over HTTPS (e.g. 80 beside 443).',
    defaultText: 'unset: no redirect listener',
    default: constant(undefined),
    parse: (raw, name) => (raw.trim() === '' ? undefined : port(raw, name)),
  }),
  variable({
    name: 'STELLWERK_HSTS_MAX_AGE',
    key: 'hstsMaxAge',
    description:
      'Seconds browsers keep to HTTPS for this host after an HTTPS answer (`Strict-Transport-Security`, sent on every HTTPS response, also when a trusted proxy reports `X-Forwarded-Proto: https`). 0 tells browsers to forget it.',
    defaultText: '`31536000` (one year)',
    default: constant(31_536_000),
    parse: integer(0, 63_072_000),
  }),
  variable({
    name: 'STELLWERK_TRUST_PROXY',
    key: 'trustProxy',
    description:
      'Reverse proxies in front of Stellwerk: addresses or CIDR ranges (IPv4, IPv6; also `loopback`, `linklocal`, `uniquelocal`), comma-separated. A request from one of them is counted for the client named in `X-Forwarded-For` (read from the right through trusted hops) and its scheme taken from `X-Forwarded-Proto`: rate limits, login throttling, credential failures, sessions, audit and request logs. Unset: forwarded headers are ignored and the proxy is the client (docs/operations.md#reverse-proxy).',
    defaultText: 'unset (none)',
    default: constant([]),
    parse: parseTrustedProxies,
  }),
] as const;

/** Checks between these variables, once all are read. */
export function checkHttpConfig(config: Config): void {
  if (config.https === 'on' && (!config.httpsCert || !config.httpsKey)) {
    throw new ConfigError(
      config.httpsCert ? 'STELLWERK_HTTPS_KEY' : 'STELLWERK_HTTPS_CERT',
      'must name a PEM file when HTTPS is on (or set STELLWERK_HTTPS=self-signed)',
    );
  }
  if (config.https === 'self-signed' && (config.httpsCert || config.httpsKey)) {
    throw new ConfigError(
      'STELLWERK_HTTPS',
      'is self-signed, but STELLWERK_HTTPS_CERT or STELLWERK_HTTPS_KEY names a certificate; use one or the other',
    );
  }
  if (config.httpRedirectPort !== undefined) {
    if (config.https === 'off') {
      throw new ConfigError(
        'STELLWERK_HTTP_REDIRECT_PORT',
        'redirects to HTTPS, which is off (STELLWERK_HTTPS)',
      );
    }
    if (config.httpRedirectPort === config.httpPort && config.httpPort !== 0) {
      throw new ConfigError(
        'STELLWERK_HTTP_REDIRECT_PORT',
        `must differ from STELLWERK_HTTP_PORT (${config.httpPort})`,
      );
    }
  }
}
