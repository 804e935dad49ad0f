import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import type { AlarmStatus } from '../integration/ports.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { AlarmLog } from './alarm-log.entity.js';
import type { AlarmSeverity } from './alarm-log.entity.js';
import { AlarmBulkBody, AlarmBulkReply, AlarmLogListQuery, AlarmLogReply } from './alarm-log.schemas.js';
import { ALARM_LOG_SORTABLE, type AlarmLogFilter } from './alarm-log.service.js';

const tags = ['alarm-logs'];

export const alarmLogDto = (a: AlarmLog) => ({
  id: a.id,
  accountId: a.account.id,
  category: a.category,
  message: a.message,
  reference: a.referenceType && a.referenceId ? { type: a.referenceType, id: a.referenceId } : null,
  source: a.sourceKind && a.sourceId ? { kind: a.sourceKind, id: a.sourceId } : null,
  status: a.status,
  severity: a.severity,
  occurrenceCount: a.occurrenceCount,
  lastSeenAt: a.lastSeenAt.toISOString(),
  acknowledgedAt: a.acknowledgedAt?.toISOString() ?? null,
  acknowledgedBy: a.acknowledgedBy,
  closedAt: a.closedAt?.toISOString() ?? null,
  closedBy: a.closedBy,
  closeReason: a.closeReason,
  clearedBy: a.clearedByKind && a.clearedById ? { kind: a.clearedByKind, id: a.clearedById } : null,
  details: a.details,
  createdAt: a.createdAt.toISOString(),
  updatedAt: a.updatedAt.toISOString(),
});

/** The list filter of a query string (or of a bulk action's `filter`). */
const filterOf = (q: {
  accountId?: string;
  status?: string;
  severity?: string;
  category?: string;
  referenceType?: string;
  referenceId?: string;
  searchItems?: string;
}): AlarmLogFilter => ({
  ...(q.accountId ? { accountId: q.accountId } : {}),
  ...(q.status ? { status: q.status.split(',') as AlarmStatus[] } : {}),
  ...(q.severity ? { severity: q.severity.split(',') as AlarmSeverity[] } : {}),
  ...(q.category ? { category: q.category } : {}),
  ...(q.referenceType ? { referenceType: q.referenceType } : {}),
  ...(q.referenceId ? { referenceId: q.referenceId } : {}),
  ...(q.searchItems?.trim() ? { search: q.searchItems.trim() } : {}),
});

export async function alarmLogRoutes(
  app: App,
  _ctx: AppContext,
  { alarmLogs, alarmBulk }: Services,
): Promise<void> {
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
      const result = await alarmLogs.list(principal(request), params, filterOf(q));
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

  for (const action of ['acknowledge', 'close'] as const) {
    app.post(
      `/xapi/v1/alarm-logs/${action}`,
      {
        config: { auth: 'principal', permission: 'alarmLog.manage' },
        schema: {
          tags,
          summary:
            action === 'acknowledge'
              ? 'Acknowledge many entries: listed ids or a filter (closed ones stay closed)'
              : 'Close many entries: listed ids or a filter',
          body: AlarmBulkBody,
          response: { 200: AlarmBulkReply, ...errorResponses },
        },
      },
      async (request) => {
        const body = request.body;
        return alarmBulk.apply(
          principal(request),
          action,
          'ids' in body ? { ids: body.ids } : { filter: filterOf(body.filter) },
        );
      },
    );
  }
}
