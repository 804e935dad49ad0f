import type { Messages } from '../../i18n/en';
import { serverErrorText, validationText } from './error-text';

/** An error as the console's client reports it (ApiError); status 0 is a local stand-in. */
export interface ReportedError {
  status: number;
  code: string;
  message: string;
  details: unknown[];
}

/** What the error notice shows. */
export interface ErrorNoticeText {
  /** The sentence, in the console's language where the console can say it. */
  message: string;
  /** The server's own words where they name what to fix (the script's exception, the parse position). */
  particulars?: string;
  /** Only for failures that are not the person's doing: what a report to support needs. */
  support?: { code: string; serverText?: string };
}

/**
 * Codes whose server message names the particulars a person needs to fix their input; the
 * catalogue's sentence alone ("The script failed.") would leave them guessing.
 */
const PARTICULAR_CODES = new Set([
  'BAD_REQUEST',
  'VALIDATION_ERROR',
  'CONNECTOR_SETTING_INVALID',
  'CONNECTOR_SETTING_MISSING',
  'INVALID_PARSER_CONFIG',
  'INVALID_HEALTH_SCHEDULE',
  'INVALID_COMMAND',
  'INVALID_PAYLOAD',
  'INVALID_TOPIC',
  'INGEST_INVALID',
  'PARSE_ERROR',
  'PARSER_ERROR',
  'SCRIPT_ERROR',
  'FILTER_RESULT_INVALID',
  'DS_FILTER_INVALID_INPUT',
  'DOWNLINK_ENCODE_FAILED',
  'QUERY_INVALID',
  'QUERY_SYNTAX_ERROR',
  'NETWORK_SERVER_REFUSED',
  'OAUTH_PROVIDER_ERROR',
  'OAUTH_PROVIDER_REJECTED',
  'BACKUP_ARCHIVE_REJECTED',
  'OUTGOING_TARGET_REFUSED',
]);

const isReported = (error: unknown): error is ReportedError =>
  error instanceof Error &&
  typeof (error as Partial<ReportedError>).status === 'number' &&
  typeof (error as Partial<ReportedError>).code === 'string' &&
  Array.isArray((error as Partial<ReportedError>).details);

/**
 * How an error reads in the notice. A refusal the console can word (a 4xx with a known code) is
 * the person's to fix: its sentence alone, plus the server's particulars for the codes above. A
 * failure (no answer, a 5xx, a code the console does not know) keeps the code and the server's
 * words for a report, shown on request.
 */
export function errorNoticeText(error: unknown, t: Messages): ErrorNoticeText {
  if (!isReported(error)) return { message: error instanceof Error ? error.message : String(error) };
  if (error.status === 0) {
    const message =
      error.code === 'TIMEOUT'
        ? t.errors.timeout.replace('{seconds}', error.message.replace(/\D/g, ''))
        : error.code === 'NETWORK_ERROR'
          ? t.errors.network
          : t.errors.unexpected;
    return { message, support: { code: error.code, serverText: error.message } };
  }
  const fieldByField = validationText(error, t);
  if (fieldByField !== undefined) return { message: fieldByField };
  const translated = serverErrorText(error, t);
  if (translated !== undefined && error.status >= 400 && error.status < 500) {
    const particular = PARTICULAR_CODES.has(error.code) && error.message !== translated;
    return particular ? { message: translated, particulars: error.message } : { message: translated };
  }
  const message = translated ?? t.errors.unexpected;
  return {
    message,
    support: { code: error.code, ...(error.message !== message ? { serverText: error.message } : {}) },
  };
}
