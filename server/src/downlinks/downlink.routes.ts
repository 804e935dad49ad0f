import type { App, AppContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { Downlink } from './downlink.entity.js';
import { DownlinkCreate, DownlinkListQuery, DownlinkReply } from './downlink.schemas.js';

const tags = ['virtual-devices'];
const READ = 'VirtualDevice.read';
const MANAGE = 'virtualDevice.manage';

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const downlinkDto = (d: Downlink) => ({
  id: d.id,
  deviceId: d.device.id,
  connectorId: d.connector.id,
  fPort: d.fPort,
  bytesHex: d.payload.toString('hex'),
  bytesBase64: d.payload.toString('base64'),
  confirmed: d.confirmed,
  status: d.status,
  error: d.error,
  remoteId: d.remoteId,
  attempts: d.attempts,
  nextAttemptAt: iso(d.nextAttemptAt),
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
  handedOverAt: iso(d.handedOverAt),
  sentAt: iso(d.sentAt),
  acknowledgedAt: iso(d.acknowledgedAt),
  createdBy: d.createdBy,
});

export async function downlinkRoutes(app: App, _ctx: AppContext, { downlinks }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.post(
    '/xapi/v1/virtual-devices/:id/downlinks',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary:
          "Queue a downlink: bytes (hex or base64) or data for the driver's encodeDownlink; delivered through the device's connector",
        params: IdParams,
        body: DownlinkCreate,
        response: { 202: DownlinkReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(downlinkDto(await downlinks.queue(principal(request), request.params.id, request.body))),
  );

  app.get(
    '/xapi/v1/virtual-devices/:id/downlinks',
    {
      config: { auth: 'principal', permission: READ, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: "The device's downlinks with their status, newest first",
        params: IdParams,
        querystring: DownlinkListQuery,
        response: { 200: listReply(DownlinkReply), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, pageSize = 25 } = request.query;
      const result = await downlinks.list(principal(request), request.params.id, page, pageSize);
      return { data: result.data.map(downlinkDto), meta: result.meta };
    },
  );
}
