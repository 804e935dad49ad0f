import type { EntityManager } from '@mikro-orm/postgresql';
import type { Job } from './job.entity.js';

/** One failed item of a job: which row or object, a code and a readable message. */
export interface JobItemError {
  row?: number;
  itemId?: string;
  code: string;
  message: string;
}

/** At most this many item errors are kept per job; the counter `failed` still counts them all. */
export const MAX_JOB_ERRORS = 1000;

/** What a handler gets while its job runs. Progress is written to the row at most every half second. */
export interface JobRunContext {
  readonly job: Job;
  /** A forked EntityManager inside its own RequestContext. */
  readonly em: EntityManager;
  setTotal(total: number): void;
  /** Counts processed items; `failed` ones should also be reported through `error`. */
  advance(succeeded: number, failed?: number): void;
  error(error: JobItemError): void;
  /** Writes progress now (handlers call it after each batch). */
  flush(): Promise<void>;
  /** The job's attachment (JobService.enqueue), one piece at a time, in order; empty without one. */
  attachment(): AsyncGenerator<string>;
}

/**
 * A job kind is a plugin: `{ type, retryable, run }`, registered on the runner. `retryable` jobs
 * (idempotent ones, e.g. template sync) are queued again when the node running them died; the
 * others are failed, since rerunning them could do their work twice.
 */
export interface JobHandler {
  type: string;
  retryable: boolean;
  run(ctx: JobRunContext): Promise<Record<string, unknown> | void>;
}
