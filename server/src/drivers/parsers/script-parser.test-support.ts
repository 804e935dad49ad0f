import { expect } from 'vitest';
import { ParseError, type CompiledParser } from '../parser.types.js';
import { javascriptParser } from './javascript.parser.js';

/** For the script parser's tests: a driver script compiled with the given settings. */
export const compileScript = (
  code: string,
  settings: Record<string, unknown> = {},
): Promise<CompiledParser> => javascriptParser.compile!({ type: 'javascript', code, ...settings });

/** The ParseError a promise rejects with; fails the test when it resolves or rejects otherwise. */
export async function parseFailure(promise: Promise<unknown>): Promise<ParseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ParseError);
  return error as ParseError;
}
