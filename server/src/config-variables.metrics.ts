import { ConfigError, constant } from './config-values.js';
import { variable } from './config-variable.js';

/** `/metrics` (config-variables.ts lists them after STELLWERK_NODE_NAME, the metrics' `node` label). */
export const METRICS_VARIABLES = [
  variable({
    name: 'STELLWERK_METRICS_TOKEN',
    key: 'metricsToken',
    description:
      'When set, `GET /metrics` answers only requests with `Authorization: Bearer <token>` (401 otherwise); at least 16 characters. A secret: masked in the logged configuration.',
    defaultText: 'unset: `/metrics` needs no credentials',
    default: constant(undefined),
    parse: (raw, name) => {
      const token = raw.trim();
      if (token === '') return undefined;
      if (token.length < 16) throw new ConfigError(name, 'must be at least 16 characters long');
      if (/\s/.test(token)) throw new ConfigError(name, 'must not contain spaces');
      return token;
    },
  }),
];
