import { SECRET_MASK } from '../../accounts/account.service.js';
import {
  integerProblem,
  problem,
  type ProblemKeyword,
  type ProblemParams,
} from '../../platform/http/problem-detail.js';
import type { ConfigProblem, KindContext } from '../connector-kind.js';

/** Small checks shared by the kinds' `validate`; each adds a `{ path, keyword, params, message }` problem. */
export class ConfigCheck {
  readonly problems: ConfigProblem[] = [];

  constructor(private readonly config: Record<string, unknown>) {}

  /** A problem at `key` (a path below `/config`, `nodes/0/nodeId`) with a keyword (problem-detail.ts). */
  problem<K extends ProblemKeyword>(
    key: string,
    keyword: K,
    params: ProblemParams[K],
    message?: string,
  ): void {
    this.problems.push(problem(`/config/${key}`, keyword, params, message));
  }

  string(key: string, options: { required?: boolean; maxLength?: number } = {}): void {
    const value = this.config[key];
    const maxLength = options.maxLength ?? 1000;
    if (value === undefined || value === null) {
      if (options.required) this.problem(key, 'required', { missingProperty: key });
      return;
    }
    if (typeof value !== 'string') return this.problem(key, 'type', { type: 'string' }, 'must be a string');
    if (options.required && value.trim() === '') this.problem(key, 'minLength', { limit: 1 });
    if (value.length > maxLength)
      this.problem(key, 'maxLength', { limit: maxLength }, `must be at most ${maxLength} characters`);
  }

  oneOf(key: string, values: readonly unknown[]): void {
    const value = this.config[key];
    if (value !== undefined && !values.includes(value))
      this.problem(
        key,
        'enum',
        { allowedValues: values },
        `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`,
      );
  }

  boolean(key: string): void {
    const value = this.config[key];
    if (value !== undefined && typeof value !== 'boolean')
      this.problem(key, 'type', { type: 'boolean' }, 'must be true or false');
  }

  integer(key: string, min: number, max: number): void {
    const value = this.config[key];
    if (value === undefined) return;
    const found = integerProblem(
      `/config/${key}`,
      value,
      min,
      max,
      `must be an integer from ${min} to ${max}`,
    );
    if (found) this.problems.push(found);
  }

  pem(key: string, label: RegExp): void {
    this.string(key, { maxLength: 20_000 });
    const value = this.config[key];
    if (typeof value === 'string' && value !== SECRET_MASK && !label.test(value))
      this.problem(key, 'format', { format: 'pem' }, 'must be PEM text (-----BEGIN …-----)');
  }

  /** Two settings given both or neither (a client certificate and its key); the problem is at `second`. */
  together(first: string, second: string): void {
    const has = (key: string) => this.config[key] !== undefined;
    if (has(first) === has(second)) return;
    const [property, missingProperty] = has(first) ? [first, second] : [second, first];
    this.problem(
      second,
      'dependentRequired',
      { property, missingProperty },
      `${first} and ${second} go together`,
    );
  }

  /** A problem no keyword states: clients show the English `message`. */
  custom(key: string, message: string): void {
    this.problems.push({ path: `/config/${key}`, message });
  }
}

/**
 * Seals the named secrets. A missing value or the mask keeps the previous sealed value, so a
 * client can send back what it read (masked) without wiping the secret.
 */
export function sealSecrets(
  config: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
  keys: readonly string[],
  { secretBox }: KindContext,
): Record<string, unknown> {
  const out = { ...config };
  for (const key of keys) {
    const value = out[key];
    if (value === undefined || value === SECRET_MASK) {
      if (previous?.[key] !== undefined) out[key] = previous[key];
      else delete out[key];
    } else if (value === null || value === '') {
      delete out[key];
    } else {
      out[key] = { sealed: secretBox.seal(typeof value === 'string' ? value : JSON.stringify(value)) };
    }
  }
  return out;
}

/** Replaces stored (sealed) secrets by the mask. */
export function maskSecrets(
  config: Record<string, unknown>,
  keys: readonly string[],
): Record<string, unknown> {
  const out = { ...config };
  for (const key of keys) if (out[key] !== undefined) out[key] = SECRET_MASK;
  return out;
}

/** The clear value of a sealed secret, or undefined. */
export function openSecret(
  config: Record<string, unknown>,
  key: string,
  ctx: KindContext,
): string | undefined {
  const value = config[key] as { sealed?: unknown } | undefined;
  return typeof value?.sealed === 'string' ? ctx.secretBox.open(value.sealed) : undefined;
}
