import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import { DashboardCreate, DashboardListQuery, DashboardReply, DashboardUpdate } from './dashboard.schemas.js';
import { DASHBOARD_SORTABLE, type DashboardView } from './dashboard.service.js';

const tags = ['dashboards'];
const READ = 'dashboard.read';
const MANAGE = 'dashboard.manage';

export const dashboardDto = ({ dashboard: d, layout }: DashboardView) => ({
  id: d.id,
  accountId: d.account.id,
  title: d.title,
  description: d.description,
  layout,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

export async function dashboardRoutes(app: App, _ctx: AppContext, { dashboards }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/dashboards',
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary: 'Dashboards of an account: search in the title, sort, paging',
        querystring: DashboardListQuery,
        response: { 200: listReply(DashboardReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, DASHBOARD_SORTABLE, 'title');
      const result = await dashboards.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(dashboardDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/dashboards/:id',
    {
      config: { auth: 'principal', permission: READ, resource: 'dashboard' },
      schema: {
        tags,
        summary: 'One dashboard',
        params: IdParams,
        response: { 200: DashboardReply, ...errorResponses },
      },
    },
    async (request) => dashboardDto(await dashboards.show(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/dashboards',
    {
      config: { auth: 'principal', permission: MANAGE },
      schema: {
        tags,
        summary: 'Create a dashboard',
        body: DashboardCreate,
        response: { 201: DashboardReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(dashboardDto(await dashboards.create(principal(request), request.body))),
  );

  app.put(
    '/xapi/v1/dashboards/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'dashboard' },
      schema: {
        tags,
        summary: 'Change a dashboard (partial: omitted fields stay)',
        params: IdParams,
        body: DashboardUpdate,
        response: { 200: DashboardReply, ...errorResponses },
      },
    },
    async (request) =>
      dashboardDto(await dashboards.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/dashboards/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'dashboard' },
      schema: {
        tags,
        summary: 'Delete a dashboard; twins showing it keep no dashboard',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await dashboards.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
