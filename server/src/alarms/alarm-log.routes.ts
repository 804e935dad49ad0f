import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import type { AlarmStatus } from '../integration/ports.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { AlarmLog } from './alarm-log.entity.js';
import { AlarmLogListQuery, AlarmLogReply } from './alarm-log.schemas.js';
import { ALARM_LOG_SORTABLE } from './alarm-log.service.js';

const tags = ['alarm-logs'];

export const alarmLogDto = (a: AlarmLog) => ({
  id: a.id,
  accountId: a.account.id,
  category: a.category,
  message: a.message,
  reference: a.referenceType && a.referenceId ? { type: a.referenceType, id: a.referenceId } : null,
  source: a.sourceKind && a.sourceId ? { kind: a.sourceKind, id: a.sourceId } : null,
  status: a.status,
  acknowledgedAt: a.acknowledgedAt?.toISOString() ?? null,
  acknowledgedBy: a.acknowledgedBy,
  closedAt: a.closedAt?.toISOString() ?? null,
  closedBy: a.closedBy,
  details: a.details,
  createdAt: a.createdAt.toISOString(),
  updatedAt: a.updatedAt.toISOString(),
});

export async function alarmLogRoutes(app: App, _ctx: AppContext, { alarmLogs }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/alarm-logs',
    {
      config: { auth: 'principal', permission: 'alarmLog.read' },
      schema: {
        tags,
        summary: 'Alarm log entries of an account (newest first by default)',
        querystring: AlarmLogListQuery,
        response: { 200: listReply(AlarmLogReply), ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const params = parseListQuery(q, ALARM_LOG_SORTABLE, '-createdAt');
      const result = await alarmLogs.list(principal(request), params, {
        ...(q.accountId ? { accountId: q.accountId } : {}),
        ...(q.status ? { status: q.status.split(',') as AlarmStatus[] } : {}),
        ...(q.category ? { category: q.category } : {}),
        ...(q.referenceType ? { referenceType: q.referenceType } : {}),
        ...(q.referenceId ? { referenceId: q.referenceId } : {}),
      });
      return { data: result.data.map(alarmLogDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/alarm-logs/:id',
    {
      config: { auth: 'principal', permission: 'alarmLog.read', resource: 'alarmLog' },
      schema: {
        tags,
        summary: 'One alarm log entry',
        params: IdParams,
        response: { 200: AlarmLogReply, ...errorResponses },
      },
    },
    async (request) => alarmLogDto(await alarmLogs.get(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/alarm-logs/:id/acknowledge',
    {
      config: { auth: 'principal', permission: 'alarmLog.manage', resource: 'alarmLog' },
      schema: {
        tags,
        summary: 'Acknowledge an open entry (409 ALARM_CLOSED when it is closed)',
        params: IdParams,
        response: { 200: AlarmLogReply, ...errorResponses },
      },
    },
    async (request) => alarmLogDto(await alarmLogs.acknowledge(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/alarm-logs/:id/close',
    {
      config: { auth: 'principal', permission: 'alarmLog.manage', resource: 'alarmLog' },
      schema: {
        tags,
        summary: 'Close an open or acknowledged entry',
        params: IdParams,
        response: { 200: AlarmLogReply, ...errorResponses },
      },
    },
    async (request) => alarmLogDto(await alarmLogs.close(principal(request), request.params.id)),
  );
}
