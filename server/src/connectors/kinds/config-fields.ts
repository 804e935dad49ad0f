import { SECRET_MASK } from '../../accounts/account.service.js';
import type { ConfigProblem, KindContext } from '../connector-kind.js';

/** Small checks shared by the kinds' `validate`; each adds `{ path, message }` problems. */
export class ConfigCheck {
  readonly problems: ConfigProblem[] = [];

  constructor(private readonly config: Record<string, unknown>) {}

  private add(key: string, message: string): void {
    this.problems.push({ path: `/config/${key}`, message });
  }

  string(key: string, options: { required?: boolean; maxLength?: number } = {}): void {
    const value = this.config[key];
    if (value === undefined || value === null) {
      if (options.required) this.add(key, 'is required');
      return;
    }
    if (typeof value !== 'string') return this.add(key, 'must be a string');
    if (options.required && value.trim() === '') this.add(key, 'must not be empty');
    if (value.length > (options.maxLength ?? 1000))
      this.add(key, `must be at most ${options.maxLength ?? 1000} characters`);
  }

  oneOf(key: string, values: readonly unknown[]): void {
    const value = this.config[key];
    if (value !== undefined && !values.includes(value))
      this.add(key, `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`);
  }

  boolean(key: string): void {
    const value = this.config[key];
    if (value !== undefined && typeof value !== 'boolean') this.add(key, 'must be true or false');
  }

  integer(key: string, min: number, max: number): void {
    const value = this.config[key];
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      this.add(key, `must be an integer from ${min} to ${max}`);
  }

  pem(key: string, label: RegExp): void {
    this.string(key, { maxLength: 20_000 });
    const value = this.config[key];
    if (typeof value === 'string' && value !== SECRET_MASK && !label.test(value))
      this.add(key, 'must be PEM text (-----BEGIN …-----)');
  }

  custom(key: string, message: string): void {
    this.add(key, message);
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
