import type { ErrorCode } from './error-codes.js';

/**
 * The one error type services throw. The HTTP error handler turns it into
 * `{"error":{"code","message","details"}}` with `status`; nothing else builds error bodies.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details: unknown[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const createError = (code: ErrorCode, status: number, message: string, details: unknown[] = []) =>
  new AppError(code, status, message, details);

/** Error factories for the codes used across domains (spec codes verbatim). */
export const errors = {
  validation: (message: string, details: unknown[] = []) =>
    new AppError('VALIDATION_ERROR', 400, message, details),
  invalidToken: (message = 'Invalid Token') => new AppError('INVALID_TOKEN', 401, message),
  invalidCredentials: () => new AppError('INVALID_CREDENTIALS', 401, 'Invalid e-mail or password'),
  noPermission: (permission: string) =>
    new AppError(`NO_PERMISSION_${permission.toUpperCase()}`, 403, `Missing permission ${permission}`, [
      { permission },
    ]),
  forbidden: (code: ErrorCode, message: string, details: unknown[] = []) =>
    new AppError(code, 403, message, details),
  notFound: (what: string, id?: string) =>
    new AppError('NOT_FOUND', 404, id ? `${what} ${id} not found` : `${what} not found`, id ? [{ id }] : []),
  conflict: (code: ErrorCode, message: string, details: unknown[] = []) =>
    new AppError(code, 409, message, details),
  deleteBlocked: (message: string, blockers: unknown[]) =>
    new AppError('DELETE_BLOCKED', 409, message, blockers),
  unprocessable: (code: ErrorCode, message: string, details: unknown[] = []) =>
    new AppError(code, 422, message, details),
  tooManyRequests: (code: ErrorCode, message: string, retryAfterSeconds: number) =>
    new AppError(code, 429, message, [{ retryAfterSeconds }], { 'retry-after': String(retryAfterSeconds) }),
  databaseUnavailable: (retryAfterSeconds = 5) =>
    new AppError(
      'DATABASE_UNAVAILABLE',
      503,
      'The database is unavailable; retry shortly',
      [{ retryAfterSeconds }],
      { 'retry-after': String(retryAfterSeconds) },
    ),
};
