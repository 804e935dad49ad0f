import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** Export plans' variables (config-variables.ts lists them after the public dashboards'). */
export const EXPORT_VARIABLES = [
  variable({
    name: 'STELLWERK_EXPORT_MAIL_ATTACHMENT_MAX_BYTES',
    key: 'exportMailAttachmentMaxBytes',
    description:
      'An export file up to this size (bytes, after compression) is attached to the e-mail of its plan; a larger one is sent as a time-limited download link.',
    defaultText: '`10485760` (10 MiB)',
    default: constant(10 * 1024 * 1024),
    parse: integer(0, 1024 * 1024 * 1024),
  }),
  variable({
    name: 'STELLWERK_EXPORT_LINK_HOURS',
    key: 'exportLinkHours',
    description: 'Hours an e-mailed export download link works.',
    defaultText: '`72`',
    default: constant(72),
    parse: integer(1, 24 * 90),
  }),
];
