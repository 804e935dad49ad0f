import pg from 'pg';
import pino from 'pino';

/**
 * Database errors as people may read them. A driver error's own message is never shown: knex puts
 * the whole statement with its bound values in front of PostgreSQL's text (`insert into … values
 * ('…') - value too long …`), so it would hand other rows' data and the schema to whoever reads a
 * job, a connector log or an API answer. Messages are built from the SQLSTATE and the fields
 * PostgreSQL reports on their own (column, constraint), never from the statement or parameters.
 */

export interface DatabaseErrorFields {
  /** SQLSTATE, e.g. `22001`. */
  code: string;
  severity?: string;
  column?: string;
  table?: string;
  constraint?: string;
  message?: string;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * A pg DatabaseError, raw or as knex and MikroORM pass it on: a DriverException copies the pg error's
 * own fields (code, severity, column …), so it is recognised by them. Not by class, so the ingest
 * worker can use this without loading MikroORM.
 */
export function isDatabaseError(error: unknown): error is DatabaseErrorFields {
  if (error instanceof pg.DatabaseError) return true;
  const e = error as Partial<DatabaseErrorFields> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.code === 'string' &&
    SQLSTATE.test(e.code) &&
    typeof e.severity === 'string'
  );
}

// Numbers and type names only, read from the end of PostgreSQL's own text (knex puts the SQL first).
const VARCHAR_LIMIT = /character varying\((\d+)\)$/;
const TYPE_NAME = /invalid input syntax for type ([a-z][a-z0-9 _]*):/;

const columnName = (e: DatabaseErrorFields) => (e.column ? `column ${e.column}` : 'a column');

/** A safe, readable text for a database error (see the file comment); pure, so callers may log the original. */
export function databaseErrorMessage(e: DatabaseErrorFields): string {
  const text = e.message ?? '';
  const code = e.code;
  switch (code) {
    case '22001': {
      const limit = VARCHAR_LIMIT.exec(text)?.[1];
      return `value too long for ${columnName(e)}${limit ? ` (at most ${limit} characters)` : ''}`;
    }
    case '22003':
      return `numeric value out of range for ${columnName(e)}`;
    case '22P02': {
      const type = TYPE_NAME.exec(text)?.[1];
      return `a value does not have the format of ${type ? `type ${type}` : columnName(e)}`;
    }
    case '22007':
    case '22008':
      return 'a date or time value is invalid or out of range';
    case '22021':
    case '22P05':
      return 'a text holds a character the database cannot store';
    case '23502':
      return `${columnName(e)} must not be empty`;
    case '23503':
      return `a referenced record does not exist or is still in use${e.constraint ? ` (${e.constraint})` : ''}`;
    case '23505':
      return `a record with these values already exists${e.constraint ? ` (${e.constraint})` : ''}`;
    case '23514':
      return `a value breaks the rule ${e.constraint ?? 'of its table'}`;
    case '40001':
    case '40P01':
      return 'the database cancelled the operation because of a concurrent change; try again';
    case '57014':
      return 'the database statement ran too long and was cancelled';
    case '25006':
      return 'the database is read-only';
  }
  if (code.startsWith('22')) return `a value is out of range or malformed (SQLSTATE ${code})`;
  if (code.startsWith('23')) return `the change breaks a database rule (SQLSTATE ${code})`;
  if (code.startsWith('08') || code.startsWith('57P')) return 'the database connection was lost';
  if (code.startsWith('53')) return 'the database is out of resources (disk, memory or connections)';
  return `database error (SQLSTATE ${code})`;
}

/** The message to store or show for any thrown value: database errors mapped, others as they are. */
export function safeErrorMessage(error: unknown): string {
  if (isDatabaseError(error)) return databaseErrorMessage(error);
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

/**
 * The server log's `err` serializer: a database error is logged with its SQLSTATE, the fields
 * PostgreSQL reports and the safe message, and its stack without the first line (which repeats the
 * driver's message with the statement and its bound values, e.g. a password hash being inserted).
 * Other errors are serialized as pino does.
 */
export function loggableError(error: unknown): unknown {
  if (!isDatabaseError(error)) return pino.stdSerializers.err(error as Error);
  const stack = (error as { stack?: unknown }).stack;
  return {
    type: (error as { name?: unknown }).name ?? 'DatabaseError',
    code: error.code,
    message: databaseErrorMessage(error),
    ...(error.table ? { table: error.table } : {}),
    ...(error.column ? { column: error.column } : {}),
    ...(error.constraint ? { constraint: error.constraint } : {}),
    ...(typeof stack === 'string'
      ? {
          stack: stack
            .split('\n')
            .filter((l) => /^\s+at /.test(l))
            .join('\n'),
        }
      : {}),
  };
}
