import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** LoRaWAN gateway variables (config-variables.ts lists them in this place). */
export const GATEWAY_VARIABLES = [
  variable({
    name: 'STELLWERK_GATEWAY_OFFLINE_AFTER_SECONDS',
    key: 'gatewayOfflineAfterSeconds',
    description:
      'A LoRaWAN gateway is offline when no uplink and no network-server status came through it for this long (a gateway’s own setting overrides it).',
    defaultText: '`600` (10 minutes)',
    default: constant(600),
    parse: integer(30, 7 * 24 * 3600),
  }),
  variable({
    name: 'STELLWERK_GATEWAY_FIGURES_DAYS',
    key: 'gatewayFiguresDays',
    description:
      'Days the hourly reception figures of gateways are kept (the 24 h figures need 1; older buckets are deleted).',
    defaultText: '`7`',
    default: constant(7),
    parse: integer(1, 366),
  }),
];
