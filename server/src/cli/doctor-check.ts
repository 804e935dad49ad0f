import type { Config } from '../config.js';

/** What one check of `stellwerk doctor` found. `fail` makes doctor exit non-zero; `warn` does not. */
export interface DoctorFinding {
  check: string;
  status: 'ok' | 'warn' | 'fail';
  /** One line for people: what was found, and on warn or fail what to do. */
  message: string;
  /** Figures for `--json` (ports, bytes free, days left …). */
  details?: Record<string, unknown>;
}

/**
 * One check of `stellwerk doctor`. Checks live beside what they check (the TLS certificate with the
 * HTTPS code, the last backup with the backups) and are listed once in doctor's registry.
 */
export interface DoctorCheck {
  name: string;
  run(config: Config): Promise<DoctorFinding | DoctorFinding[]>;
}
