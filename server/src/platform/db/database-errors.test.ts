import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { databaseErrorMessage, isDatabaseError, loggableError, safeErrorMessage } from './database-errors.js';

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

  it('reach the server log without the statement or its values', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = pino({ serializers: { err: loggableError } }, sink);
    const statement = `insert into "users" ("password_hash") values ('$argon2id$secret-hash') - `;
    const error = pgError({
      code: '22001',
      column: 'email',
      table: 'users',
      message: `${statement}value too long for type character varying(320)`,
    });
    error.stack = `Error: ${error.message}\n    at insert (knex.js:1:1)`;
    log.error({ err: error }, 'request failed');
    log.error({ err: new Error('plain failure') }, 'other');
    const [database, plain] = lines.map((l) => JSON.parse(l) as { err: Record<string, unknown> });
    expect(lines[0]).not.toContain('secret-hash');
    expect(lines[0]).not.toContain('insert into');
    expect(database!.err).toMatchObject({
      code: '22001',
      table: 'users',
      column: 'email',
      message: 'value too long for column email (at most 320 characters)',
      stack: '    at insert (knex.js:1:1)',
    });
    expect(plain!.err).toMatchObject({ type: 'Error', message: 'plain failure' });
  });
});
