import type { Parser } from './config-values.js';
import type { Config } from './config.js';

/** Every environment variable: name, default, README text and parser (the README table is generated from it). */
export interface EnvVariable<K extends keyof Config> {
  name: string;
  key: K;
  description: string;
  /** Human-readable default for the README. */
  defaultText: string;
  default: (env: NodeJS.ProcessEnv) => Config[K];
  parse: Parser<Config[K]>;
}

export function variable<K extends keyof Config>(v: EnvVariable<K>): EnvVariable<K> {
  return v;
}
