import type { FastifyError, FastifyInstance } from 'fastify';
import type { DatabaseAvailability } from '../db/database-availability.js';
import { isDatabaseUnavailable } from '../db/database-availability.js';
import { databaseErrorMessage, isDatabaseError } from '../db/database-errors.js';
import type { ErrorCode } from '../error-codes.js';
import { AppError, errors } from '../errors.js';
import { validationDetails, validationMessage, type SchemaError } from './validation-details.js';

interface ErrorBody {
  error: { code: ErrorCode; message: string; details: unknown[] };
}

/** Maps a thrown value to status + error body. Unknown failures are 500 without internals. */
export function toErrorReply(error: unknown): {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
} {
  const reply = (
    status: number,
    code: ErrorCode,
    message: string,
    details: unknown[] = [],
    headers = {},
  ) => ({
    status,
    body: { error: { code, message, details } },
    headers,
  });

  if (error instanceof AppError)
    return reply(error.status, error.code, error.message, error.details, error.headers);

  const fe = error as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (fe?.validation) {
    const details = validationDetails(fe.validation, fe.validationContext);
    return reply(400, 'VALIDATION_ERROR', validationMessage(details, fe.validationContext), details);
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply(413, 'PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content type is not supported; send application/json');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return reply(414, 'URI_TOO_LONG', 'A path parameter is longer than allowed');
    case 'FST_ERR_BAD_URL':
      return reply(400, 'VALIDATION_ERROR', 'The URL is malformed');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return reply(400, 'VALIDATION_ERROR', fe.message);
  }
  // Only errors Fastify marks as the request's fault; a SyntaxError thrown by our own code is a 500.
  if (fe?.statusCode === 400) {
    return reply(400, 'VALIDATION_ERROR', `Malformed request: ${fe.message}`);
  }
  if (isDatabaseError(error)) {
    // Constraint violations are the caller's input racing another write, never a server fault.
    if (error.code === '23505')
      return reply(409, 'CONFLICT', 'A resource with these values already exists', [
        { constraint: error.constraint },
      ]);
    if (error.code === '23503')
      return reply(409, 'CONFLICT', 'A referenced resource does not exist or is still in use', [
        { constraint: error.constraint },
      ]);
    // Data errors name the column and limit at most; the driver's message carries the statement.
    if (error.code.startsWith('22'))
      return reply(400, 'VALIDATION_ERROR', `Invalid value: ${databaseErrorMessage(error)}`, [
        ...(error.column ? [{ column: error.column }] : []),
      ]);
    return reply(500, 'INTERNAL_ERROR', 'Internal server error');
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Fastify's own code goes in details: clients (the console's translations) know only catalogued codes.
    return reply(fe.statusCode, 'BAD_REQUEST', fe.message, fe.code ? [{ fastifyCode: fe.code }] : []);
  }
  return reply(500, 'INTERNAL_ERROR', 'Internal server error');
}

/**
 * One error handler. A failure because PostgreSQL cannot be reached, or any server fault while the
 * availability probe says it cannot, is 503 DATABASE_UNAVAILABLE (clients retry), not 500.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  database?: Pick<DatabaseAvailability, 'up' | 'suspect'>,
): void {
  app.setErrorHandler((error, request, reply) => {
    let { status, body, headers } = toErrorReply(error);
    if (status >= 500 && (isDatabaseUnavailable(error) || database?.up === false)) {
      database?.suspect();
      ({ status, body, headers } = toErrorReply(errors.databaseUnavailable()));
      request.log.warn({ err: error }, 'request failed: database unavailable');
      return reply.status(status).headers(headers).send(body);
    }
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ code: body.error.code }, 'request refused');
    return reply.status(status).headers(headers).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      error: {
        code: 'NOT_FOUND' satisfies ErrorCode,
        message: `Route ${request.method} ${request.url.split('?')[0]} not found`,
        details: [],
      },
    }),
  );
}
