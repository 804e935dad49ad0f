import { ConfigError, constant } from './config-values.js';
import { variable } from './config-variable.js';

/** `auto`: readable lines when stdout is a terminal, JSON lines otherwise (platform/logging). */
export type LogFormatSetting = 'auto' | 'json' | 'pretty';

const FORMATS: LogFormatSetting[] = ['auto', 'json', 'pretty'];

/** How the server writes its log (config-variables.ts lists them after STELLWERK_LOG_LEVEL). */
export const LOGGING_VARIABLES = [
  variable({
    name: 'STELLWERK_LOG_FORMAT',
    key: 'logFormat',
    description:
      '`json` (one JSON object per line, for log collectors), `pretty` (readable lines) or `auto`: pretty when the output is a terminal, JSON otherwise.',
    defaultText: '`auto`',
    default: constant<LogFormatSetting>('auto'),
    parse: (raw, name) => {
      const value = raw.trim().toLowerCase() as LogFormatSetting;
      if (!FORMATS.includes(value)) throw new ConfigError(name, `must be one of ${FORMATS.join(', ')}`);
      return value;
    },
  }),
];
