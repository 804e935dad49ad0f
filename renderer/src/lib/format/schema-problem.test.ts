import { describe, expect, it } from 'vitest';
import { SERVER_KEYWORDS } from '../../../../server/src/platform/http/problem-detail';
import { FORMAT_NAMES } from '../../../../server/src/platform/http/validation-details';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import { problemAt, problemsByPath } from '../form-problems';
import { errorMessage, validationText } from './error-text';
import { fieldLabel, schemaProblem, schemaProblemLines } from './schema-problem';

const t = en.schemaProblems;
const g = de.schemaProblems;
const detail = (keyword: string, params: Record<string, unknown>, path = '/title') => ({
  location: 'body',
  path,
  keyword,
  params,
  message: 'the server’s English',
});

describe('schema problems', () => {
  it('word the length, range and list limits', () => {
    expect(schemaProblem(detail('minLength', { limit: 1 }), t)).toBe('must not be empty');
    expect(schemaProblem(detail('minLength', { limit: 3 }), t)).toBe('must have at least 3 characters');
    expect(schemaProblem(detail('maxLength', { limit: 1 }), t)).toBe('must have at most 1 character');
    expect(schemaProblem(detail('maxLength', { limit: 200 }), g)).toBe('darf höchstens 200 Zeichen haben');
    expect(schemaProblem(detail('maximum', { comparison: '<=', limit: 100 }), t)).toBe('must be at most 100');
    expect(schemaProblem(detail('minimum', { comparison: '>=', limit: 1 }), g)).toBe(
      'muss mindestens 1 sein',
    );
    expect(schemaProblem(detail('exclusiveMinimum', { limit: 0 }), t)).toBe('must be greater than 0');
    expect(schemaProblem(detail('exclusiveMaximum', { limit: 90 }), g)).toBe('muss kleiner als 90 sein');
    expect(schemaProblem(detail('minItems', { limit: 1 }), g)).toBe('darf nicht leer sein');
    expect(schemaProblem(detail('minItems', { limit: 2 }), t)).toBe('must have at least 2 entries');
    expect(schemaProblem(detail('maxItems', { limit: 1 }), g)).toBe('darf höchstens 1 Eintrag haben');
    expect(schemaProblem(detail('maxItems', { limit: 50 }), g)).toBe('darf höchstens 50 Einträge haben');
  });

  it('name types, formats, choices and patterns', () => {
    expect(schemaProblem(detail('type', { type: 'number' }), t)).toBe('must be a number');
    expect(schemaProblem(detail('type', { type: 'integer' }), g)).toBe('muss eine ganze Zahl sein');
    expect(schemaProblem(detail('type', { type: ['number', 'null'] }), g)).toBe(
      'muss eine Zahl oder leer sein',
    );
    expect(schemaProblem(detail('type', { type: 'string,boolean,null' }), t)).toBe(
      'must be text, true or false or empty',
    );
    expect(schemaProblem(detail('format', { format: 'date-time' }), t)).toBe('must be a date and time');
    expect(schemaProblem(detail('format', { format: 'email' }), g)).toBe('muss eine E-Mail-Adresse sein');
    expect(schemaProblem(detail('format', { format: 'iso-week' }), g)).toBe(
      'muss dem Format iso-week entsprechen',
    );
    expect(schemaProblem(detail('enum', { allowedValues: ['a', 'b'] }), t)).toBe('must be one of: a, b');
    expect(schemaProblem(detail('enum', { allowedValues: ['above', 'below'] }), g)).toBe(
      'muss einer dieser Werte sein: above, below',
    );
    expect(schemaProblem(detail('const', { allowedValue: 'event' }), t)).toBe('must be event');
    expect(schemaProblem(detail('pattern', { pattern: '^[^_\\s]' }), g)).toBe(
      'hat nicht die erwartete Form (^[^_\\s])',
    );
    expect(schemaProblem(detail('required', { missingProperty: 'title' }), g)).toBe('ist erforderlich');
    expect(schemaProblem(detail('uniqueItems', { i: 1, j: 0 }), t)).toBe(
      'must not contain the same entry twice',
    );
    expect(schemaProblem(detail('additionalProperties', { additionalProperty: 'colour' }), g)).toBe(
      'darf das Feld colour nicht enthalten',
    );
  });

  it('word object sizes and settings that go together', () => {
    expect(schemaProblem(detail('minProperties', { limit: 1 }, '/trigger/schedule'), t)).toBe(
      'must not be empty',
    );
    expect(schemaProblem(detail('minProperties', { limit: 1 }, '/trigger/schedule'), g)).toBe(
      'darf nicht leer sein',
    );
    expect(schemaProblem(detail('maxProperties', { limit: 1 }, '/trigger/schedule'), t)).toBe(
      'must have at most 1 field',
    );
    expect(schemaProblem(detail('maxProperties', { limit: 30 }, '/config/headers'), g)).toBe(
      'darf höchstens 30 Felder haben',
    );
    const together = detail(
      'dependentRequired',
      { property: 'latitude', missingProperty: 'longitude' },
      '/longitude',
    );
    expect(schemaProblem(together, t)).toBe('Longitude is required with Latitude');
    expect(schemaProblem(together, g)).toBe('Längengrad ist zusammen mit Breitengrad erforderlich');
  });

  it('word the server’s own keywords: a missing reference, a taken value, a cron expression', () => {
    expect(schemaProblem(detail('notFound', { id: 'x' }, '/source/deviceId'), t)).toBe('was not found');
    expect(schemaProblem(detail('notFound', {}, '/twinId'), g)).toBe('wurde nicht gefunden');
    expect(schemaProblem(detail('unique', { value: 'Pumps' }, '/name'), t)).toBe('must be unique');
    expect(schemaProblem(detail('unique', { value: 'a' }, '/fields/1/key'), g)).toBe('muss eindeutig sein');
    const cron = (params: Record<string, unknown>, texts = t) =>
      schemaProblem(detail('cron', params, '/trigger/schedule'), texts);
    expect(cron({ reason: 'fieldCount', count: 3 })).toBe(
      'has 3 fields; give 5 (minute hour day-of-month month day-of-week) or 6 with seconds first',
    );
    expect(cron({ reason: 'fieldCount', count: 1 }, g)).toMatch(/^hat 1 Feld; erwartet sind 5/);
    expect(cron({ reason: 'value', value: '61', field: 'minute' })).toBe('"61" is not a valid minute (0–59)');
    expect(cron({ reason: 'value', value: '25', field: 'hour' }, g)).toBe(
      '„25“ ist kein gültiger Wert für: Stunde (0–23)',
    );
    expect(cron({ reason: 'step' })).toBe('a step (/n) must be 1 or more');
    expect(cron({ reason: 'never' }, g)).toBe('trifft auf kein Datum zu und würde nie ausgeführt');
    expect(cron({ reason: 'syntax' }, g)).toBe('ist kein gültiger Cron-Ausdruck');
    // A reason this console does not know yet keeps the server's English.
    expect(cron({ reason: 'leap-second' })).toBe('the server’s English');
  });

  it('word every server keyword and every format the server names, in both languages', () => {
    for (const texts of [t, g]) {
      for (const keyword of SERVER_KEYWORDS) {
        const params = keyword === 'cron' ? { reason: 'never' } : {};
        expect(schemaProblem(detail(keyword, params), texts), keyword).not.toBe('the server’s English');
      }
      expect(Object.keys(FORMAT_NAMES).filter((format) => !Object.hasOwn(texts.formats, format))).toEqual([]);
    }
    expect(schemaProblem(detail('format', { format: 'http-url' }, '/config/apiUrl'), t)).toBe(
      'must be an http:// or https:// URL',
    );
    expect(schemaProblem(detail('format', { format: 'pem' }, '/config/clientKey'), g)).toBe(
      'muss PEM-Text (-----BEGIN …-----) sein',
    );
  });

  it('keep the server’s message for a keyword they do not know and for the server’s own checks', () => {
    expect(schemaProblem(detail('if', { failingKeyword: 'then' }), g)).toBe('the server’s English');
    expect(schemaProblem({ path: '/parser/fields/0/offset', message: 'offset must be an integer' }, g)).toBe(
      'offset must be an integer',
    );
    expect(schemaProblem({ path: '/code' }, t)).toBeUndefined();
  });

  it('label a field by the last segment of its path', () => {
    expect(fieldLabel('/title', t)).toBe('Title');
    expect(fieldLabel('/trigger/conditions/0/value', t)).toBe('Value');
    expect(fieldLabel('/params/windowSeconds', t)).toBe('Window (seconds)');
    expect(fieldLabel('/params/windowSeconds', g)).toBe('Zeitfenster (Sekunden)');
    expect(fieldLabel('/title', g)).toBe('Titel');
    expect(fieldLabel('/someNewField', g)).toBe('Some new field');
    expect(fieldLabel('/device_id', t)).toBe('Device id');
    expect(fieldLabel('/config/apiURL', t)).toBe('Api URL');
    expect(fieldLabel('/mailTo/1', t)).toBe('Recipients 2');
    expect(fieldLabel('', g)).toBe('Anfrage');
  });

  it('make one line per field of a schema refusal, none for the server’s own checks', () => {
    expect(
      schemaProblemLines(
        [detail('minLength', { limit: 1 }), detail('maximum', { limit: 100 }, '/retentionMonths')],
        t,
      ),
    ).toEqual(['Title: must not be empty', 'Retention months: must be at most 100']);
    expect(schemaProblemLines([{ path: '/trigger/schedule' }], t)).toBeUndefined();
  });
});

describe('validation error texts', () => {
  const refusal = {
    code: 'VALIDATION_ERROR',
    message: 'Invalid body: title must not be empty',
    details: [detail('minLength', { limit: 1 })],
  };

  it('read a schema refusal field by field in the console’s language', () => {
    expect(validationText(refusal, en)).toBe('Title: must not be empty');
    expect(errorMessage(refusal, de)).toBe('Titel: darf nicht leer sein');
  });

  it('leave a refusal of the server’s own checks to its code', () => {
    const own = {
      code: 'VALIDATION_ERROR',
      message: 'cron: bad expression',
      details: [{ path: '/trigger/schedule' }],
    };
    expect(validationText(own, en)).toBeUndefined();
    expect(errorMessage(own, en)).toBe('The input is invalid.');
  });

  it('put each translated problem at its form field', () => {
    const problems = problemsByPath(
      [
        detail('type', { type: 'number' }, '/params/windowSeconds'),
        detail('required', { missingProperty: 'title' }),
        { path: '/mailConnectorId', message: 'not a mail connector' },
        { path: '/params' },
      ],
      'Invalid parameters',
      g,
    );
    expect(problemAt(problems, '/params/windowSeconds')).toBe('muss eine Zahl sein');
    expect(problemAt(problems, '/title')).toBe('ist erforderlich');
    expect(problemAt(problems, '/mailConnectorId')).toBe('not a mail connector');
    expect(problems.get('/params')).toBe('Invalid parameters');
  });
});
