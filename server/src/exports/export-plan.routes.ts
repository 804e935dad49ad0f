import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { jobDto } from '../jobs/job.routes.js';
import { JobReply } from '../jobs/job.schemas.js';
import type { JobView } from '../jobs/job.service.js';
import { errors } from '../platform/errors.js';
import { openContainedFile } from '../platform/http/contained-file.js';
import { attachmentDisposition, sendContainedFile } from '../platform/http/file-reply.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { ExportPlan } from './export-plan.entity.js';
import {
  ExportLinkParams,
  ExportPlanCreate,
  ExportPlanListQuery,
  ExportPlanReply,
  ExportPlanUpdate,
  ExportPreviewBody,
  ExportPreviewReply,
} from './export-plan.schemas.js';
import { EXPORT_PLAN_SORTABLE } from './export-plan.service.js';
import type { ExportFile } from './export-runs.service.js';

const tags = ['export-plans'];

export const exportPlanDto = (p: ExportPlan, lastJob: JobView | undefined) => ({
  id: p.id,
  accountId: p.account.id,
  title: p.title,
  selection: p.selection,
  range: p.range,
  timeZone: p.timeZone,
  shape: p.shape,
  format: p.format,
  mailConnectorId: p.mailConnector?.id ?? null,
  mailTo: p.mailTo,
  schedule: p.schedule,
  permissionScopeIds: p.permissionScopeIds,
  nextRunAt: p.nextRunAt?.toISOString() ?? null,
  lastRunAt: p.lastRunAt?.toISOString() ?? null,
  lastJob: lastJob ? jobDto(lastJob) : null,
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});

const FILE_TYPES = { csv: 'text/csv; charset=utf-8', gz: 'application/gzip' };

export async function exportPlanRoutes(
  app: App,
  _ctx: AppContext,
  { exportPlans, exportRuns, jobs }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const withJobs = async (plans: ExportPlan[]) => {
    const views = await jobs.views(plans.flatMap((p) => (p.lastJobId ? [p.lastJobId] : [])));
    const byId = new Map(views.map((v) => [v.job.id, v]));
    return plans.map((p) => exportPlanDto(p, p.lastJobId ? byId.get(p.lastJobId) : undefined));
  };
  const one = async (plan: ExportPlan) => (await withJobs([plan]))[0]!;
  const sendFile = async (request: FastifyRequest, reply: FastifyReply, found: ExportFile) => {
    const dir = found.path.slice(0, found.path.length - found.name.length);
    const file = await openContainedFile(dir, found.name);
    if (!file) throw errors.notFound('Export file');
    reply.header('content-disposition', attachmentDisposition(found.downloadName));
    return sendContainedFile(
      request,
      reply,
      file,
      found.name.endsWith('.gz') ? FILE_TYPES.gz : FILE_TYPES.csv,
    );
  };

  app.get(
    '/xapi/v1/export-plans',
    {
      config: { auth: 'principal', permission: 'exportPlan.read' },
      schema: {
        tags,
        summary: 'Export plans with their last run (status, progress, queue position) and next run',
        querystring: ExportPlanListQuery,
        response: { 200: listReply(ExportPlanReply), ...errorResponses },
      },
    },
    async (request) => {
      const result = await exportPlans.list(
        principal(request),
        parseListQuery(request.query, EXPORT_PLAN_SORTABLE, 'title'),
        request.query.accountId,
      );
      return { data: await withJobs(result.data), meta: result.meta };
    },
  );

  app.post(
    '/xapi/v1/export-plans',
    {
      config: { auth: 'principal', permission: 'exportPlan.manage' },
      schema: {
        tags,
        summary: 'Create an export plan',
        body: ExportPlanCreate,
        response: { 201: ExportPlanReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await one(await exportPlans.create(principal(request), request.body))),
  );

  app.post(
    '/xapi/v1/export-plans/preview',
    {
      config: { auth: 'principal', permission: 'exportPlan.read' },
      schema: {
        tags,
        summary: 'The first 20 rows a definition exports now, over the caller’s own twins',
        body: ExportPreviewBody,
        response: { 200: ExportPreviewReply, ...errorResponses },
      },
    },
    async (request) => exportRuns.preview(principal(request), request.body),
  );

  app.get(
    '/xapi/v1/export-plans/:id',
    {
      config: { auth: 'principal', permission: 'exportPlan.read', resource: 'exportPlan' },
      schema: {
        tags,
        summary: 'One export plan',
        params: IdParams,
        response: { 200: ExportPlanReply, ...errorResponses },
      },
    },
    async (request) => one(await exportPlans.get(principal(request), request.params.id)),
  );

  app.put(
    '/xapi/v1/export-plans/:id',
    {
      config: { auth: 'principal', permission: 'exportPlan.manage', resource: 'exportPlan' },
      schema: {
        tags,
        summary: 'Change an export plan (the fields given)',
        params: IdParams,
        body: ExportPlanUpdate,
        response: { 200: ExportPlanReply, ...errorResponses },
      },
    },
    async (request) => one(await exportPlans.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/export-plans/:id',
    {
      config: { auth: 'principal', permission: 'exportPlan.manage', resource: 'exportPlan' },
      schema: {
        tags,
        summary: 'Delete an export plan (its finished files stay until their jobs expire)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await exportPlans.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/xapi/v1/export-plans/:id/run',
    {
      config: { auth: 'principal', permission: 'exportPlan.manage', resource: 'exportPlan' },
      schema: {
        tags,
        summary: 'Run the plan now: queues an export job',
        params: IdParams,
        response: { 202: JobReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const job = await exportRuns.run(principal(request), request.params.id);
      const [view] = await jobs.views([job.id]);
      return reply.status(202).send(jobDto(view ?? { job, queuePosition: null }));
    },
  );

  app.get(
    '/xapi/v1/jobs/:id/file',
    {
      config: { auth: 'principal', permission: 'exportPlan.read', resource: 'exportJob' },
      schema: {
        tags,
        summary: 'The file of a finished export job (HTTP ranges: resumable)',
        params: IdParams,
        response: { 200: Type.String({ description: 'CSV, or gzip-compressed CSV' }), ...errorResponses },
      },
    },
    async (request, reply) =>
      sendFile(request, reply, await exportRuns.file(principal(request), request.params.id)),
  );

  app.get(
    '/xapi/v1/export-files/:token',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'An export file by the time-limited link of its e-mail (HTTP ranges: resumable)',
        params: ExportLinkParams,
        response: { 200: Type.String({ description: 'CSV, or gzip-compressed CSV' }), ...errorResponses },
      },
    },
    async (request, reply) => sendFile(request, reply, await exportRuns.fileByLink(request.params.token)),
  );
}
