import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** Incoming webhooks' variables (config-variables.ts lists them after the API rate limit). */
export const WEBHOOK_VARIABLES = [
  variable({
    name: 'STELLWERK_WEBHOOK_RATE_LIMIT',
    key: 'webhookRateLimit',
    description:
      'Requests per minute one incoming-webhook connector accepts; then 429. The Things Stack webhooks (`tts-uplink`) are exempt (docs/adr/0108-tts-webhooks-not-rate-limited.md).',
    defaultText: '`6000`',
    default: constant(6000),
    parse: integer(1, 10_000_000),
  }),
];
