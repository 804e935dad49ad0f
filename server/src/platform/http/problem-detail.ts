import { problemText } from './validation-details.js';

/**
 * Details of the server's own checks (those after the route schema) in the shape a schema failure
 * has (validation-details.ts): the field's `path`, a `keyword` with its `params`, and an English
 * `message`, so clients word both alike in their language (docs/api.md, "Errors"). A check JSON
 * Schema could state takes Ajv's keyword and params; the others take one of SERVER_KEYWORDS.
 */

/** Keywords of checks no JSON Schema keyword states. */
export const SERVER_KEYWORDS = ['notFound', 'unique', 'cron'] as const;
export type ServerKeyword = (typeof SERVER_KEYWORDS)[number];

/** The fields of a cron expression, seconds first when it has six. */
export type CronField = 'second' | 'minute' | 'hour' | 'day' | 'month' | 'dayOfWeek';

/** Why a cron expression cannot be used (platform/schedule.ts). */
export type CronParams =
  | { reason: 'fieldCount'; count: number }
  | { reason: 'value'; value: string; field: CronField }
  | { reason: 'step' }
  | { reason: 'never' }
  | { reason: 'syntax' };

/** The params of each keyword: Ajv's names for Ajv's keywords. */
export interface ProblemParams {
  /** `missingProperty` defaults to the last segment of the path (`/title` → `title`). */
  required: { missingProperty?: string };
  /** `missingProperty` must be given when `property` is. */
  dependentRequired: { property: string; missingProperty: string };
  type: { type: string | readonly string[] };
  enum: { allowedValues: readonly unknown[] };
  minimum: { limit: number };
  maximum: { limit: number };
  exclusiveMinimum: { limit: number };
  exclusiveMaximum: { limit: number };
  minLength: { limit: number };
  maxLength: { limit: number };
  minItems: { limit: number };
  maxItems: { limit: number };
  minProperties: { limit: number };
  maxProperties: { limit: number };
  /** Ajv's formats and the server's own (`http-url`, `pem` …: FORMAT_NAMES in validation-details.ts). */
  format: { format: string };
  pattern: { pattern: string };
  /** The value names an object that does not exist or that the caller cannot use here. */
  notFound: { id?: string };
  /** Another object (or another entry of the same list) has this value already. */
  unique: { value?: unknown };
  cron: CronParams;
}
export type ProblemKeyword = keyof ProblemParams;

export interface ProblemDetail<K extends ProblemKeyword = ProblemKeyword> {
  path: string;
  keyword: K;
  params: ProblemParams[K];
  /** English, without the field's name: `is required`. */
  message: string;
}

/**
 * A problem a check found: a keyword where one fits (any of a schema's own, where a schema found
 * it), else only the English message.
 */
export interface CheckProblem {
  path: string;
  message: string;
  keyword?: string;
  params?: object;
}

const COMPARISON: Partial<Record<ProblemKeyword, string>> = {
  minimum: '>=',
  maximum: '<=',
  exclusiveMinimum: '>',
  exclusiveMaximum: '<',
};

/** A keyword's params may be left out when it has none that must be given. */
type ParamsArgs<K extends ProblemKeyword> =
  Record<string, never> extends ProblemParams[K]
    ? [params?: ProblemParams[K], message?: string]
    : [params: ProblemParams[K], message?: string];

const lastSegment = (path: string) => (path.split('/').at(-1) ?? '').replace(/~1/g, '/').replace(/~0/g, '~');

/**
 * One detail of a server check. `message` defaults to the English a schema failure with this
 * keyword gets (`required` → "is required"); checks that word their problem more exactly pass it.
 */
export function problem<K extends ProblemKeyword>(
  path: string,
  keyword: K,
  ...[params, message]: ParamsArgs<K>
): ProblemDetail<K> {
  const given: Record<string, unknown> = { ...params };
  if (keyword === 'required') given.missingProperty ??= lastSegment(path);
  // The comparison Ajv adds to range keywords, so these details read exactly like the schema's.
  const comparison = COMPARISON[keyword];
  const full = comparison ? { comparison, ...given } : given;
  return {
    path,
    keyword,
    params: full as ProblemParams[K],
    message: message ?? problemText(keyword, full, 'is invalid'),
  };
}

/** Undefined for an integer from `min` to `max`, else the detail naming the bound it breaks. */
export function integerProblem(
  path: string,
  value: unknown,
  min: number,
  max: number,
  message?: string,
): ProblemDetail | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value))
    return problem(path, 'type', { type: 'integer' }, message);
  if (value < min) return problem(path, 'minimum', { limit: min }, message);
  if (value > max) return problem(path, 'maximum', { limit: max }, message);
  return undefined;
}
