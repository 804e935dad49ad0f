import { Cron } from 'croner';
import type { DoctorCheck, DoctorFinding } from '../cli/doctor-check.js';
import type { Config } from '../config.js';
import { newestArchive } from './backup.schedule.js';

const HOUR_MS = 60 * 60 * 1000;
/** Without a schedule, a backup older than this is worth a warning. */
const UNSCHEDULED_WARN_MS = 7 * 24 * HOUR_MS;

/**
 * `stellwerk doctor`: the age of the newest archive in STELLWERK_BACKUP_DIR. With a schedule, an
 * archive older than two intervals (plus an hour for a long run) means the scheduled backups fail:
 * that fails. Without one, no archive or one older than a week is a warning.
 */
export const lastBackupCheck: DoctorCheck = {
  name: 'backup',
  run: (config) => checkLastBackup(config),
};

export async function checkLastBackup(config: Config, now = new Date()): Promise<DoctorFinding> {
  const newest = await newestArchive(config.backupDir);
  const interval = config.backupSchedule ? scheduleInterval(config.backupSchedule, now) : undefined;
  const limit = interval === undefined ? UNSCHEDULED_WARN_MS : 2 * interval + HOUR_MS;
  const details: Record<string, unknown> = {
    dir: config.backupDir,
    schedule: config.backupSchedule ?? null,
    limitHours: round(limit / HOUR_MS),
  };
  if (!newest) {
    return {
      check: 'backup',
      status: 'warn',
      message: config.backupSchedule
        ? `no backup in ${config.backupDir} yet; the schedule "${config.backupSchedule}" runs next at ${new Cron(config.backupSchedule, { paused: true }).nextRun(now)?.toISOString() ?? 'never'}`
        : `no backup in ${config.backupDir}; run stellwerk backup, or set STELLWERK_BACKUP_SCHEDULE`,
      details,
    };
  }
  const ageMs = now.getTime() - newest.at.getTime();
  const ageText = ageMs < 2 * HOUR_MS ? `${Math.round(ageMs / 60_000)} min` : `${round(ageMs / HOUR_MS)} h`;
  Object.assign(details, {
    file: newest.file,
    bytes: newest.bytes,
    at: newest.at.toISOString(),
    ageHours: round(ageMs / HOUR_MS),
  });
  if (ageMs <= limit)
    return { check: 'backup', status: 'ok', message: `last backup ${ageText} ago (${newest.file})`, details };
  return {
    check: 'backup',
    status: interval === undefined ? 'warn' : 'fail',
    message:
      interval === undefined
        ? `last backup ${ageText} ago (${newest.file}); run stellwerk backup, or set STELLWERK_BACKUP_SCHEDULE`
        : `last backup ${ageText} ago, but STELLWERK_BACKUP_SCHEDULE "${config.backupSchedule}" should have made one since: see the failed jobs in GET /xapi/v1/jobs?type=backup and the server log`,
    details,
  };
}

/** The time between two consecutive runs of the schedule after `now`. */
function scheduleInterval(schedule: string, now: Date): number | undefined {
  const [first, second] = new Cron(schedule, { paused: true }).nextRuns(2, now);
  return first && second ? second.getTime() - first.getTime() : undefined;
}

const round = (value: number) => Math.round(value * 10) / 10;
