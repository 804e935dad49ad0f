import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { DeviceState, VirtualDevice } from '../devices/virtual-device.entity.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply, Uuid } from '../platform/http/schemas.js';
import { HUB_DEVICE_SORTABLE } from './hub-device.service.js';
import {
  HubDataBody,
  HubDataReply,
  HubDevice,
  HubDeviceListQuery,
  HubDeviceWithStates,
} from './hub.schemas.js';

const tags = ['hub'];
const security = [{ apiKey: [] }];

const deviceDto = (d: VirtualDevice) => ({
  id: d.id,
  accountId: d.account.id,
  device_id: d.deviceId,
  title: d.title,
  description: d.description,
  connectorId: d.connector?.id ?? null,
  tags: d.tags,
  healthState: d.healthState,
  lastSeen: d.lastSeen?.toISOString() ?? null,
  createdAt: d.createdAt.toISOString(),
});

const stateDto = (s: DeviceState) => ({ key: s.key, value: s.value, timestamp: s.timestamp.toISOString() });

/**
 * Legacy IoT hub API under `{hub_url}/api` = `/hub/api`. Every route uses auth mode 'hub':
 * an `x-api-key` holding IotHub.manage, IotHub.read or all.manage (auth/authenticate.ts).
 */
export async function hubRoutes(
  app: App,
  _ctx: AppContext,
  { accounts, hubDevices }: Services,
): Promise<void> {
  app.get(
    '/hub/api/v1/account',
    {
      config: { auth: 'hub' },
      schema: {
        tags,
        summary: 'The account the API key belongs to',
        security,
        response: { 200: Type.Object({ id: Uuid, title: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const account = await accounts.reachable(principal, principal.accountId);
      return { id: account.id, title: account.title };
    },
  );

  app.get(
    '/hub/api/v1/devices',
    {
      config: { auth: 'hub' },
      schema: {
        tags,
        summary: "Devices of the key's account and its sub-accounts",
        security,
        querystring: HubDeviceListQuery,
        response: { 200: listReply(HubDevice), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, HUB_DEVICE_SORTABLE, 'title');
      const result = await hubDevices.list(request.principal!, params);
      return { data: result.data.map(deviceDto), meta: result.meta };
    },
  );

  app.get(
    '/hub/api/v1/devices/:id',
    {
      config: { auth: 'hub', resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'One device with its current states',
        security,
        params: IdParams,
        response: { 200: HubDeviceWithStates, ...errorResponses },
      },
    },
    async (request) => {
      const { device, states } = await hubDevices.getWithStates(request.principal!, request.params.id);
      return { ...deviceDto(device), states: states.map(stateDto) };
    },
  );

  app.post(
    '/hub/api/v1/devices/:id/data',
    {
      config: { auth: 'hub', permission: 'IotHub.manage', resource: 'virtualDevice' },
      schema: {
        tags,
        summary:
          "Push data for a device: stored as a packet of its connector and parsed by the device's driver",
        security,
        params: IdParams,
        body: HubDataBody,
        response: { 202: HubDataReply, ...errorResponses, 503: errorResponses[409] },
      },
    },
    async (request, reply) => {
      await hubDevices.push(request.principal!, request.params.id, request.body);
      return reply.status(202).send({ accepted: 1 });
    },
  );
}
