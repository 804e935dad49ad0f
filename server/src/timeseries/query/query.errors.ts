import { AppError } from '../../platform/errors.js';

/** Where in the query text something went wrong: 0-based offset plus 1-based line and column. */
export interface QueryPosition {
  position: number;
  line: number;
  column: number;
}

export function positionOf(text: string, offset: number): QueryPosition {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { position: offset, line, column: offset - before.lastIndexOf('\n') };
}

/** The text cannot be tokenised or parsed: 400 QUERY_SYNTAX_ERROR with what was expected there. */
export function querySyntaxError(
  text: string,
  offset: number,
  message: string,
  expected: string[] = [],
  found?: string,
): AppError {
  const at = positionOf(text, offset);
  return new AppError('QUERY_SYNTAX_ERROR', 400, `${message} at line ${at.line}, column ${at.column}`, [
    { ...at, expected, ...(found !== undefined ? { found } : {}) },
  ]);
}

/** The query parses but means nothing valid (unknown alias, ungrouped column …): 400 QUERY_INVALID. */
export function queryInvalid(text: string, offset: number, message: string): AppError {
  const at = positionOf(text, offset);
  return new AppError('QUERY_INVALID', 400, `${message} at line ${at.line}, column ${at.column}`, [at]);
}
