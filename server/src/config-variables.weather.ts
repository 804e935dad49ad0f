import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** The weather connector kind's variables (config-variables.ts lists them in this place). */
export const WEATHER_VARIABLES = [
  variable({
    name: 'STELLWERK_WEATHER_MIN_INTERVAL_SECONDS',
    key: 'weatherMinIntervalSeconds',
    description:
      'Shortest poll interval of weather connectors, whatever their settings say (respects the public API; an on-site mirror may allow less).',
    defaultText: '`60`',
    default: constant(60),
    parse: integer(1, 86_400),
  }),
];
