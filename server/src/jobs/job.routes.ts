import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import { JobListQuery, JobReply } from './job.schemas.js';
import type { JobItemError } from './job.types.js';
import { JOB_SORTABLE, type JobView } from './job.service.js';

const tags = ['jobs'];

export const jobDto = ({ job, queuePosition }: JobView) => ({
  id: job.id,
  accountId: job.account.id,
  type: job.type,
  status: job.status,
  queuePosition,
  subjectId: job.subjectId,
  total: job.total,
  progress: job.progress,
  succeeded: job.succeeded,
  failed: job.failed,
  errors: job.errors as unknown as JobItemError[],
  result: job.result,
  createdAt: job.createdAt.toISOString(),
  startedAt: job.startedAt?.toISOString() ?? null,
  finishedAt: job.finishedAt?.toISOString() ?? null,
  updatedAt: job.updatedAt.toISOString(),
});

export async function jobRoutes(app: App, _ctx: AppContext, { jobs }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/jobs',
    {
      config: { auth: 'principal', permission: 'job.read' },
      schema: {
        tags,
        summary: 'Background jobs of an account (imports, template synchronisation), newest first',
        querystring: JobListQuery,
        response: { 200: listReply(JobReply), ...errorResponses },
      },
    },
    async (request) => {
      const { accountId, status, type } = request.query;
      const params = parseListQuery(request.query, JOB_SORTABLE, '-createdAt');
      const result = await jobs.list(principal(request), params, {
        ...(accountId ? { accountId } : {}),
        ...(status ? { status } : {}),
        ...(type ? { type } : {}),
      });
      return { data: result.data.map(jobDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/jobs/:id',
    {
      config: { auth: 'principal', permission: 'job.read', resource: 'job' },
      schema: {
        tags,
        summary: 'One job with progress, item errors and its queue position while queued',
        params: IdParams,
        response: { 200: JobReply, ...errorResponses },
      },
    },
    async (request) => jobDto(await jobs.get(principal(request), request.params.id)),
  );
}
