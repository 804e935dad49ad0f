import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

export type JobStatus = 'queued' | 'running' | 'finished' | 'failed';

/** A background job (CSV import, template sync, …): progress, per-item errors, a final state. */
export class Job {
  id: string = newId();
  account!: Account;
  type!: string;
  status: JobStatus = 'queued';
  /** What the job works on (e.g. a device template), so deletions can be blocked while it runs. */
  subjectId: string | null = null;
  input: Record<string, unknown> = {};
  progress = 0;
  total = 0;
  succeeded = 0;
  failed = 0;
  /** Per-item errors, bounded: `{ row, code, message }`. */
  errors: Array<Record<string, unknown>> = [];
  result: Record<string, unknown> = {};
  createdByUserId: string | null = null;
  /** Node running it; a job whose node died is taken over or failed, never left running. */
  nodeId: string | null = null;
  createdAt: Date = new Date();
  startedAt: Date | null = null;
  finishedAt: Date | null = null;
  updatedAt: Date = new Date();
}

export const JobSchema = new EntitySchema<Job>({
  class: Job,
  tableName: 'jobs',
  indexes: [{ properties: ['status', 'createdAt'] }, { properties: ['subjectId'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    type: { type: 'string', length: 60 },
    status: { type: 'string', length: 16 },
    subjectId: { type: 'uuid', nullable: true },
    input: { type: 'json' },
    progress: { type: 'integer', default: 0 },
    total: { type: 'integer', default: 0 },
    succeeded: { type: 'integer', default: 0 },
    failed: { type: 'integer', default: 0 },
    errors: { type: 'json' },
    result: { type: 'json' },
    createdByUserId: { type: 'uuid', nullable: true },
    nodeId: { type: 'uuid', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    startedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    finishedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
