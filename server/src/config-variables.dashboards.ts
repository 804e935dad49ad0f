import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** Public dashboards' variables (config-variables.ts lists them after the incoming webhooks'). */
export const DASHBOARD_VARIABLES = [
  variable({
    name: 'STELLWERK_PUBLIC_DASHBOARD_RATE_LIMIT',
    key: 'publicDashboardRateLimit',
    description:
      'Requests per minute one client address may make to one public dashboard (its data and its live socket, no login); then 429 API_LIMIT_REACHED.',
    defaultText: '`120`',
    default: constant(120),
    parse: integer(1, 1_000_000),
  }),
];
