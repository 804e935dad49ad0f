import { describe, expect, it } from 'vitest';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import { errorNoticeText } from './error-notice';

/** The shape of the console client's ApiError, without the browser-bound client module. */
function apiError(status: number, code: string, message: string, details: unknown[] = []) {
  return Object.assign(new Error(message), { status, code, details });
}

describe('error notice text', () => {
  it('says a refusal the console knows in its sentence alone, without code or server words', () => {
    const wrongPassword = apiError(401, 'INVALID_CREDENTIALS', 'invalid email or password');
    expect(errorNoticeText(wrongPassword, de)).toEqual({
      message: 'E-Mail-Adresse oder Passwort ist falsch.',
    });
    const taken = apiError(409, 'ROLE_NAME_TAKEN', 'role name "Operators" exists');
    expect(errorNoticeText(taken, en)).toEqual({ message: 'A role with this name exists already.' });
  });

  it('adds the server’s particulars where they name what to fix', () => {
    const parse = apiError(422, 'PARSE_ERROR', 'Field "t" needs bytes 0..1 but the payload has 1 bytes');
    expect(errorNoticeText(parse, en)).toEqual({
      message: 'The payload could not be parsed.',
      particulars: 'Field "t" needs bytes 0..1 but the payload has 1 bytes',
    });
  });

  it('reads a schema refusal field by field', () => {
    const refusal = apiError(400, 'VALIDATION_ERROR', 'body/title must NOT have fewer than 1 characters', [
      { path: '/title', keyword: 'minLength', params: { limit: 1 } },
    ]);
    expect(errorNoticeText(refusal, en).support).toBeUndefined();
    expect(errorNoticeText(refusal, en).message).toMatch(/^Title: /);
  });

  it('keeps code and server words for a report when the server failed', () => {
    const internal = apiError(500, 'INTERNAL_ERROR', 'Internal Server Error');
    expect(errorNoticeText(internal, de)).toEqual({
      message: 'Auf dem Server ist ein Fehler aufgetreten.',
      support: { code: 'INTERNAL_ERROR', serverText: 'Internal Server Error' },
    });
  });

  it('says a code it does not know in its own words and keeps the server’s for a report', () => {
    const unknown = apiError(400, 'SOMETHING_NEW', 'Something new went wrong');
    expect(errorNoticeText(unknown, de)).toEqual({
      message: de.errors.unexpected,
      support: { code: 'SOMETHING_NEW', serverText: 'Something new went wrong' },
    });
  });

  it('says a missing answer in the console’s language, the browser’s words kept for a report', () => {
    const offline = apiError(0, 'NETWORK_ERROR', 'Failed to fetch');
    expect(errorNoticeText(offline, de)).toEqual({
      message: de.errors.network,
      support: { code: 'NETWORK_ERROR', serverText: 'Failed to fetch' },
    });
    expect(errorNoticeText(apiError(0, 'TIMEOUT', 'No answer within 30 s'), en).message).toBe(
      'The server did not answer within 30 s.',
    );
  });

  it('shows a console-made error as it is', () => {
    expect(errorNoticeText(new Error('The file is not an image.'), en)).toEqual({
      message: 'The file is not an image.',
    });
  });
});
