import { AppError } from '../platform/errors.js';

/**
 * Coded errors of backup, restore and the upgrade guard. They reach people as the CLI's one-line
 * reason, a job's error or the start-up message, so each message says what to do.
 */
export const backupErrors = {
  failed: (reason: string) => new AppError('BACKUP_FAILED', 500, `The backup failed: ${reason}`),
  archiveRejected: (file: string, reason: string) =>
    new AppError('BACKUP_ARCHIVE_REJECTED', 422, `${file} is refused, nothing was restored: ${reason}`),
  schemaNewer: (message: string) => new AppError('BACKUP_SCHEMA_NEWER', 422, message),
  targetNotEmpty: (message: string) => new AppError('RESTORE_TARGET_NOT_EMPTY', 409, message),
  serverRunning: (message: string) => new AppError('RESTORE_SERVER_RUNNING', 409, message),
  restoreFailed: (reason: string) =>
    new AppError(
      'RESTORE_FAILED',
      500,
      `The restore failed and the files it had written were removed: ${reason}`,
    ),
};

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
