import { api } from '../../api/client';
import type { Reply } from '../../api/generated';

export type Job = Reply<'GET /xapi/v1/jobs/{id}'>;

export const isEnded = (job: Job) => job.status === 'finished' || job.status === 'failed';

/**
 * Follows a background job until it ends: reads `GET /xapi/v1/jobs/{id}` every `intervalMs` and
 * hands each reading to `onUpdate`. Resolves with the final job; `signal` stops it (resolving with
 * the last reading). A failed read is retried at the next tick up to three times in a row.
 */
export async function followJob(
  first: Job,
  onUpdate: (job: Job) => void,
  { intervalMs = 500, signal }: { intervalMs?: number; signal?: AbortSignal } = {},
): Promise<Job> {
  let job = first;
  let failures = 0;
  onUpdate(job);
  while (!isEnded(job) && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    if (signal?.aborted) break;
    try {
      job = await api.call('GET /xapi/v1/jobs/{id}', { path: { id: job.id } });
      failures = 0;
      onUpdate(job);
    } catch (error) {
      if (++failures >= 3) throw error;
    }
  }
  return job;
}

/** The job's share done, 0–1; a queued job is 0 and an ended one 1 whatever it counted. */
export function jobFraction(job: Job): number {
  if (isEnded(job)) return 1;
  if (job.status === 'queued' || job.total <= 0) return 0;
  return Math.min(1, job.progress / job.total);
}
