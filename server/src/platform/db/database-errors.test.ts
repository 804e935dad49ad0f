import { describe, expect, it } from 'vitest';
import { databaseErrorMessage, isDatabaseError, safeErrorMessage } from './database-errors.js';

const pgError = (fields: Record<string, string>) =>
  Object.assign(new Error(fields.message ?? ''), { severity: 'ERROR', ...fields });

describe('database error messages', () => {
  it('are built from SQLSTATE, column and constraint, never from the statement', () => {
    const statement = `insert into "t" ("a") values ('private') - `;
    expect(
      databaseErrorMessage({
        code: '22001',
        column: 'title',
        message: `${statement}value too long for type character varying(200)`,
      }),
    ).toBe('value too long for column title (at most 200 characters)');
    expect(databaseErrorMessage({ code: '23502', column: 'type', message: statement })).toBe(
      'column type must not be empty',
    );
    expect(databaseErrorMessage({ code: '23505', constraint: 'x_unique', message: statement })).toBe(
      'a record with these values already exists (x_unique)',
    );
    expect(databaseErrorMessage({ code: '42P01', message: `${statement}relation "t" does not exist` })).toBe(
      'database error (SQLSTATE 42P01)',
    );
    expect(databaseErrorMessage({ code: '08006' })).toBe('the database connection was lost');
  });

  it('recognise pg errors by their fields and leave other errors alone', () => {
    expect(isDatabaseError(pgError({ code: '22001' }))).toBe(true);
    expect(isDatabaseError(Object.assign(new Error('broken pipe'), { code: 'EPIPE' }))).toBe(false);
    expect(safeErrorMessage(new Error('plain'))).toBe('plain');
    expect(safeErrorMessage({ message: 'shaped like one' })).toBe('shaped like one');
    expect(safeErrorMessage('text')).toBe('text');
    expect(safeErrorMessage(pgError({ code: '57014', message: 'select pg_sleep(100) - canceling' }))).toBe(
      'the database statement ran too long and was cancelled',
    );
  });
});
