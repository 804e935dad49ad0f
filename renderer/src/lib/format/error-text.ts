import type { Messages } from '../../i18n/en';
import { schemaProblemLines } from './schema-problem';

/** The `NO_PERMISSION_<PERMISSION>` family (server/src/platform/error-codes.ts). */
const NO_PERMISSION = 'NO_PERMISSION_';

interface CodedError {
  code: string;
  message: string;
  details: unknown[];
}

/**
 * The translated text of a server error code, or undefined when the console has none (then the
 * server's own message is shown). `NO_PERMISSION_X` names the permission from its details.
 */
export function serverErrorText(error: CodedError, t: Messages): string | undefined {
  const texts = t.serverErrors as Record<string, string>;
  if (error.code.startsWith(NO_PERMISSION)) {
    const detail = error.details[0] as { permission?: unknown } | undefined;
    const permission =
      typeof detail?.permission === 'string'
        ? detail.permission
        : error.code.slice(NO_PERMISSION.length).toLowerCase();
    return texts.NO_PERMISSION?.replace('{permission}', permission);
  }
  return Object.hasOwn(texts, error.code) ? texts[error.code] : undefined;
}

/**
 * A VALIDATION_ERROR field by field in the console's language ("Title: must not be empty"), from the
 * details' keywords (the route schema's and those of the server's own checks), or undefined for any
 * other error and for details without a keyword.
 */
export function validationText(error: CodedError, t: Messages): string | undefined {
  if (error.code !== 'VALIDATION_ERROR') return undefined;
  return schemaProblemLines(error.details, t.schemaProblems)?.join('; ');
}

/** The field-by-field or translated text, else the server's message. */
export function errorMessage(error: CodedError, t: Messages): string {
  return validationText(error, t) ?? serverErrorText(error, t) ?? error.message;
}
