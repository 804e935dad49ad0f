import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors } from '../platform/errors.js';
import { listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { Job, type JobStatus } from './job.entity.js';
import type { JobRunner } from './job.runner.js';

export const JOB_SORTABLE = ['createdAt', 'updatedAt', 'type', 'status'] as const;

/** A job as the API shows it: queued jobs carry their place in the queue (1 = next). */
export interface JobView {
  job: Job;
  queuePosition: number | null;
}

const ATTACHMENT_SQL = 'INSERT INTO job_attachments (job_id, seq, content) VALUES (?, ?, ?)';

// Positions over the whole queue (all accounts): that is the order jobs are claimed in.
const POSITION_SQL = `
  SELECT id, pos FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS pos FROM jobs WHERE status = 'queued') q
   WHERE id IN (?)`;

/**
 * Background jobs of an account. Callers have checked `job.read`; here the account must be
 * reachable. Domains create jobs through `enqueue` and never write the table themselves.
 */
export class JobService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    readonly runner: JobRunner,
  ) {}

  /**
   * Adds a job to the queue (flushed at once) and wakes the runner. An `attachment` (a large input,
   * in pieces the handler reads back with `ctx.attachment()`) is stored in the same transaction as
   * the job, so the job is claimed only once all of it is there; when reading the pieces throws,
   * nothing is queued and the error reaches the caller. `total` may be a function, asked after the
   * attachment is read (a file's row count).
   */
  async enqueue(input: {
    account: Account;
    type: string;
    subjectId?: string | null;
    input?: Record<string, unknown>;
    total?: number | (() => number);
    createdByUserId?: string | null;
    attachment?: AsyncIterable<string>;
  }): Promise<Job> {
    const job = new Job();
    job.account = input.account;
    job.type = input.type;
    job.subjectId = input.subjectId ?? null;
    job.input = input.input ?? {};
    job.createdByUserId = input.createdByUserId ?? null;
    const total = () => (typeof input.total === 'function' ? input.total() : (input.total ?? 0));
    const attachment = input.attachment;
    if (!attachment) {
      job.total = total();
      await this.em().persistAndFlush(job);
    } else {
      await this.em().transactional(async (em) => {
        em.persist(job);
        await em.flush();
        let seq = 0;
        for await (const content of attachment) {
          await em
            .getConnection()
            .execute(ATTACHMENT_SQL, [job.id, seq++, content], 'run', em.getTransactionContext());
        }
        job.total = total();
        await em.flush();
      });
    }
    this.runner.wake();
    return job;
  }

  /** Queued or running jobs about `subjectId`: deletions of the subject are blocked by them. */
  pendingFor(subjectId: string): Promise<Job[]> {
    return this.em().find(
      Job,
      { subjectId, status: { $in: ['queued', 'running'] } },
      { orderBy: { createdAt: 'asc' } },
    );
  }

  async list(
    principal: Principal,
    params: ListParams,
    filter: { accountId?: string; status?: JobStatus; type?: string },
  ): Promise<ListResult<JobView>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const where: FilterQuery<Job> = { account };
    if (filter.status) where.status = filter.status;
    if (filter.type) where.type = filter.type;
    const [rows, total] = await this.em().findAndCount(Job, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(await this.withPositions(rows), total, params);
  }

  async get(principal: Principal, id: string): Promise<JobView> {
    const job = await this.em().findOne(Job, { id }, { populate: ['account'] });
    if (!job || !canReach(principal, job.account)) throw errors.notFound('Job', id);
    const [view] = await this.withPositions([job]);
    return view!;
  }

  /**
   * Jobs by id for another domain that has checked access to what they are about (an export
   * plan's runs); missing ids are left out.
   */
  async views(ids: string[]): Promise<JobView[]> {
    if (ids.length === 0) return [];
    const jobs = await this.em().find(Job, { id: { $in: ids } }, { populate: ['account'] });
    return this.withPositions(jobs);
  }

  /** Which of `ids` still name a job (housekeeping of files kept by job id). */
  async existing(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const jobs = await this.em().find(Job, { id: { $in: ids } }, { fields: ['id'] });
    return new Set(jobs.map((j) => j.id));
  }

  private async withPositions(jobs: Job[]): Promise<JobView[]> {
    const queued = jobs.filter((j) => j.status === 'queued').map((j) => j.id);
    const positions = new Map<string, number>();
    if (queued.length > 0) {
      const rows = await this.em()
        .getConnection()
        .execute<Array<{ id: string; pos: string }>>(POSITION_SQL, [queued]);
      for (const row of rows) positions.set(row.id, Number(row.pos));
    }
    return jobs.map((job) => ({ job, queuePosition: positions.get(job.id) ?? null }));
  }
}
