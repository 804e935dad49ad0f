import { EntitySchema } from '@mikro-orm/core';
import { Job } from './job.entity.js';

/**
 * Input of a job too large for `jobs.input` (an uploaded file), in numbered pieces: the job reads
 * one piece at a time, lists of jobs never load it, and it is deleted when the job ends.
 */
export class JobAttachment {
  job!: Job;
  seq!: number;
  content!: string;
}

export const JobAttachmentSchema = new EntitySchema<JobAttachment>({
  class: JobAttachment,
  tableName: 'job_attachments',
  properties: {
    job: { kind: 'm:1', entity: () => Job, primary: true, deleteRule: 'cascade' },
    seq: { type: 'integer', primary: true },
    content: { type: 'text' },
  },
});
