import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** Supervision of the embedded PostgreSQL (config-variables.ts lists them after DATABASE_URL). */
export const DATABASE_VARIABLES = [
  variable({
    name: 'STELLWERK_PG_RESTART_ATTEMPTS',
    key: 'pgRestartAttempts',
    description:
      'Restarts of the embedded PostgreSQL after it exits unexpectedly (waits of 0.25 s to 30 s between them), counted from the last time it ran for a minute. When they are used up the server exits with code 1 so that its service manager restarts it; 0 exits at the first unexpected exit. Ignored with `DATABASE_URL`.',
    defaultText: '`10`',
    default: constant(10),
    parse: integer(0, 1000),
  }),
];
