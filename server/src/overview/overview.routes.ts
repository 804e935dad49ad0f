import type { Principal } from '../auth/principal.js';
import { alarmLogDto } from '../alarms/alarm-log.routes.js';
import type { App, AppContext } from '../context.js';
import { errorResponses } from '../platform/http/schemas.js';
import type { Services } from '../services.js';
import { OverviewQuery, OverviewReply } from './overview.schemas.js';
import type { Overview } from './overview.service.js';

const dto = (o: Overview) => ({
  accountId: o.accountId,
  generatedAt: o.generatedAt.toISOString(),
  ...(o.devices ? { devices: o.devices } : {}),
  ...(o.connectors ? { connectors: o.connectors } : {}),
  ...(o.ingest
    ? {
        ingest: {
          ...o.ingest,
          minutes: o.ingest.minutes.map((m) => ({ ...m, minute: m.minute.toISOString() })),
        },
      }
    : {}),
  ...(o.alarms ? { alarms: { ...o.alarms, recent: o.alarms.recent.map(alarmLogDto) } } : {}),
  ...(o.gateways
    ? {
        gateways: {
          total: o.gateways.total,
          offline: o.gateways.offline,
          offlineList: o.gateways.offlineList.map((g) => ({
            id: g.id,
            title: g.title,
            eui: g.eui,
            lastSeenAt: g.lastSeenAt?.toISOString() ?? null,
            statusChangedAt: g.statusChangedAt?.toISOString() ?? null,
          })),
        },
      }
    : {}),
});

/** The console's overview page (docs/overview.md). */
export async function overviewRoutes(app: App, _ctx: AppContext, { overview }: Services): Promise<void> {
  app.get(
    '/xapi/v1/overview',
    {
      // No single permission: each part needs its own, and a part not permitted is left out.
      config: { auth: 'principal' },
      schema: {
        tags: ['overview'],
        summary: 'The state of an account: devices by health, connectors, ingest rate, alarms, gateways',
        querystring: OverviewQuery,
        response: { 200: OverviewReply, ...errorResponses },
      },
    },
    async (request) => dto(await overview.get(request.principal as Principal, request.query.accountId)),
  );
}
