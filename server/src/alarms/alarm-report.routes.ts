import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import {
  AccountListQuery,
  AlarmReportCreate,
  AlarmReportReply,
  AlarmReportUpdate,
  SmartGroupCreate,
  SmartGroupReply,
  SmartGroupUpdate,
} from './alarm-report.schemas.js';
import { ALARM_REPORT_SORTABLE, EXECUTE_REPORT_ACTION } from './alarm-report.service.js';
import type { AlarmReportView } from './alarm-report-views.js';
import type { SmartGroup } from './smart-group.entity.js';
import { SMART_GROUP_SORTABLE } from './smart-group.service.js';

export const smartGroupDto = (g: SmartGroup) => ({
  id: g.id,
  accountId: g.account.id,
  title: g.title,
  target: g.target,
  filter: g.filter,
  createdAt: g.createdAt.toISOString(),
  updatedAt: g.updatedAt.toISOString(),
});

export const alarmReportDto = ({ report: r, lastResult }: AlarmReportView) => ({
  id: r.id,
  accountId: r.account.id,
  smartGroupId: r.smartGroup.id,
  title: r.title,
  schedule: (r.schedule as Record<string, unknown> | null) ?? null,
  alarmHealthStates: r.alarmHealthStates,
  mailConnectorId: r.mailConnector?.id ?? null,
  mailTo: r.mailTo,
  permissionScopeIds: r.permissionScopeIds,
  nextRunAt: r.nextRunAt?.toISOString() ?? null,
  lastRunAt: r.lastRunAt ? new Date(r.lastRunAt).toISOString() : null,
  lastResult: (lastResult as unknown as Record<string, unknown> | null) ?? null,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

export async function alarmReportRoutes(
  app: App,
  _ctx: AppContext,
  { smartGroups, alarmReports }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const noContent = Type.Null();

  app.get(
    '/xapi/v1/smart-groups',
    {
      config: { auth: 'principal', permission: 'smartGroup.read' },
      schema: {
        tags: ['smart-groups'],
        summary: 'Smart groups (saved device/twin filters)',
        querystring: AccountListQuery,
        response: { 200: listReply(SmartGroupReply), ...errorResponses },
      },
    },
    async (request) => {
      const result = await smartGroups.list(
        principal(request),
        parseListQuery(request.query, SMART_GROUP_SORTABLE, 'title'),
        request.query.accountId,
      );
      return { data: result.data.map(smartGroupDto), meta: result.meta };
    },
  );
  app.get(
    '/xapi/v1/smart-groups/:id',
    {
      config: { auth: 'principal', permission: 'smartGroup.read', resource: 'smartGroup' },
      schema: {
        tags: ['smart-groups'],
        summary: 'One smart group',
        params: IdParams,
        response: { 200: SmartGroupReply, ...errorResponses },
      },
    },
    async (request) => smartGroupDto(await smartGroups.get(principal(request), request.params.id)),
  );
  app.post(
    '/xapi/v1/smart-groups',
    {
      config: { auth: 'principal', permission: 'smartGroup.manage' },
      schema: {
        tags: ['smart-groups'],
        summary: 'Create a smart group',
        body: SmartGroupCreate,
        response: { 201: SmartGroupReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(smartGroupDto(await smartGroups.create(principal(request), request.body))),
  );
  app.put(
    '/xapi/v1/smart-groups/:id',
    {
      config: { auth: 'principal', permission: 'smartGroup.manage', resource: 'smartGroup' },
      schema: {
        tags: ['smart-groups'],
        summary: 'Change a smart group',
        params: IdParams,
        body: SmartGroupUpdate,
        response: { 200: SmartGroupReply, ...errorResponses },
      },
    },
    async (request) =>
      smartGroupDto(await smartGroups.update(principal(request), request.params.id, request.body)),
  );
  app.delete(
    '/xapi/v1/smart-groups/:id',
    {
      config: { auth: 'principal', permission: 'smartGroup.manage', resource: 'smartGroup' },
      schema: {
        tags: ['smart-groups'],
        summary: 'Delete a smart group (409 DELETE_BLOCKED while alarm reports use it)',
        params: IdParams,
        response: { 204: noContent, ...errorResponses },
      },
    },
    async (request, reply) => {
      await smartGroups.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/xapi/v1/alarm-reports',
    {
      config: { auth: 'principal', permission: 'alarmReport.read' },
      schema: {
        tags: ['alarm-reports'],
        summary: 'Alarm reports of an account',
        querystring: AccountListQuery,
        response: { 200: listReply(AlarmReportReply), ...errorResponses },
      },
    },
    async (request) => {
      const result = await alarmReports.list(
        principal(request),
        parseListQuery(request.query, ALARM_REPORT_SORTABLE, 'title'),
        request.query.accountId,
      );
      return { data: result.data.map(alarmReportDto), meta: result.meta };
    },
  );
  app.post(
    '/xapi/v1/smart-groups/:id/alarm-reports',
    {
      config: { auth: 'principal', permission: 'alarmReport.manage', resource: 'smartGroup' },
      schema: {
        tags: ['alarm-reports'],
        summary: 'Create an alarm report over a smart group',
        params: IdParams,
        body: AlarmReportCreate,
        response: { 201: AlarmReportReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(
        alarmReportDto(
          await alarmReports.create(principal(request), {
            ...request.body,
            smartGroupId: request.params.id,
          }),
        ),
      ),
  );
  app.get(
    '/xapi/v1/alarm-reports/:id',
    {
      config: { auth: 'principal', permission: 'alarmReport.read', resource: 'alarmReport' },
      schema: {
        tags: ['alarm-reports'],
        summary: 'One alarm report with its last result',
        params: IdParams,
        response: { 200: AlarmReportReply, ...errorResponses },
      },
    },
    async (request) => alarmReportDto(await alarmReports.show(principal(request), request.params.id)),
  );
  app.put(
    '/xapi/v1/alarm-reports/:id',
    {
      config: { auth: 'principal', permission: 'alarmReport.manage', resource: 'alarmReport' },
      schema: {
        tags: ['alarm-reports'],
        summary: 'Change an alarm report',
        params: IdParams,
        body: AlarmReportUpdate,
        response: { 200: AlarmReportReply, ...errorResponses },
      },
    },
    async (request) =>
      alarmReportDto(await alarmReports.update(principal(request), request.params.id, request.body)),
  );
  app.delete(
    '/xapi/v1/alarm-reports/:id',
    {
      config: { auth: 'principal', permission: 'alarmReport.manage', resource: 'alarmReport' },
      schema: {
        tags: ['alarm-reports'],
        summary: 'Delete an alarm report',
        params: IdParams,
        response: { 204: noContent, ...errorResponses },
      },
    },
    async (request, reply) => {
      await alarmReports.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/xapi/v1/alarm-reports/:id/execute',
    {
      config: { auth: 'principal', permission: 'alarmReport.manage', resource: 'alarmReport' },
      schema: {
        tags: ['alarm-reports'],
        summary: `Action ${EXECUTE_REPORT_ACTION}: run the report now; the reply carries its result`,
        params: IdParams,
        response: { 200: AlarmReportReply, ...errorResponses },
      },
    },
    async (request) => alarmReportDto(await alarmReports.execute(principal(request), request.params.id)),
  );
}
