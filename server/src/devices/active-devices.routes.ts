import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses, Timestamp, Uuid } from '../platform/http/schemas.js';
import { MAX_ACTIVE_RANGE_DAYS } from './active-devices.service.js';

const ActiveCountQuery = Type.Object(
  {
    accountId: Type.Optional(Uuid),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Default: 30 days before `to`.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Default: now.' })),
    includeSubAccounts: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

const ActiveCountReply = Type.Object({
  count: Type.Integer(),
  from: Timestamp,
  to: Timestamp,
  accountId: Uuid,
  includeSubAccounts: Type.Boolean(),
});

export async function activeDevicesRoutes(
  app: App,
  _ctx: AppContext,
  { activeDevices }: Services,
): Promise<void> {
  app.get(
    '/xapi/v1/virtual-devices/active-count',
    {
      config: { auth: 'principal', permission: 'VirtualDevice.read' },
      schema: {
        tags: ['virtual-devices'],
        summary: `Devices that sent a packet in [from, to] (at most ${MAX_ACTIVE_RANGE_DAYS} days; default the last 30 days)`,
        querystring: ActiveCountQuery,
        response: { 200: ActiveCountReply, ...errorResponses },
      },
    },
    async (request) => activeDevices.count(request.principal!, request.query),
  );
}
