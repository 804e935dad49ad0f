import path from 'node:path';
import { cronProblem } from './platform/schedule.js';
import { ConfigError, constant, defaultDataDir, integer, text, type Parser } from './config-values.js';
import { variable } from './config-variable.js';

/** A cron expression (5 fields, or 6 with seconds first) that runs at some time; empty: no schedule. */
const cronSchedule: Parser<string | undefined> = (raw, name) => {
  const value = raw.trim();
  if (value === '') return undefined;
  const problem = cronProblem(value);
  if (problem) throw new ConfigError(name, `must be a cron expression such as "0 2 * * *" (${problem})`);
  return value;
};

/** Scheduled backups (docs/operations.md, "Backup and restore"); config-variables.ts lists them after the spool. */
export const BACKUP_VARIABLES = [
  variable({
    name: 'STELLWERK_BACKUP_SCHEDULE',
    key: 'backupSchedule',
    description:
      "When the server makes a backup by itself: a cron expression in the server's local time zone (`0 2 * * *`: daily at 02:00; 6 fields: seconds first). One node of a cluster runs it; each run is a job of kind `backup` in the root account and shows in `/metrics`. Unset: no scheduled backups (`stellwerk backup` still works).",
    defaultText: 'unset',
    default: constant(undefined),
    parse: cronSchedule,
  }),
  variable({
    name: 'STELLWERK_BACKUP_KEEP',
    key: 'backupKeep',
    description:
      'Scheduled and manual archives kept in the backup directory: after each successful scheduled backup the oldest beyond this count are deleted. Archives made before an upgrade are never deleted by it.',
    defaultText: '`7`',
    default: constant(7),
    parse: integer(1, 10_000),
  }),
  variable({
    name: 'STELLWERK_BACKUP_DIR',
    key: 'backupDir',
    description:
      'Where scheduled backups, the automatic backup before a database upgrade, and `stellwerk backup` without `--out` write their archives (`stellwerk-backup-<UTC time>.tar.gz`).',
    defaultText: '`<STELLWERK_DATA_DIR>/backups`',
    default: (env) =>
      path.join(
        env.STELLWERK_DATA_DIR ? path.resolve(env.STELLWERK_DATA_DIR) : defaultDataDir(env),
        'backups',
      ),
    parse: (raw, name) => path.resolve(text(raw, name)),
  }),
];
