import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseDeviceFilter } from '../devices/virtual-device.filter.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import {
  DigitalTwinCreate,
  DigitalTwinListQuery,
  DigitalTwinReply,
  DigitalTwinUpdate,
  GeocodeQuery,
  TwinStatisticsQuery,
  TwinStatisticsReply,
} from './digital-twin.schemas.js';
import { splitStatusFilter } from './digital-twin.filter.js';
import { DIGITAL_TWIN_SORTABLE, type TwinView } from './digital-twin.service.js';

const tags = ['digital-twins'];
const READ = 'digitalTwin.read';
const MANAGE = 'digitalTwin.manage';
/** The geocoder can answer 503 GEOCODER_UNAVAILABLE; listed so the OpenAPI document shows it. */
const writeResponses = { ...errorResponses, 503: errorResponses[400] };

export const digitalTwinDto = ({ twin: t, hierarchy, states }: TwinView) => ({
  id: t.id,
  accountId: t.account.id,
  parentId: t.parent?.id ?? null,
  title: t.title,
  description: t.description,
  address: t.address,
  latitude: t.latitude,
  longitude: t.longitude,
  referenceId: t.referenceId,
  customProperties: t.customProperties,
  tags: t.tags,
  useParentScope: t.useParentScope,
  permissionScopeId: t.permissionScope?.id ?? null,
  effectivePermissionScopeId: t.effectivePermissionScope?.id ?? null,
  status: t.status,
  dashboardId: t.dashboard?.id ?? null,
  hierarchy,
  states: states.map((s) => ({ ...s, timestamp: s.timestamp?.toISOString() ?? null })),
  createdAt: t.createdAt.toISOString(),
  updatedAt: t.updatedAt.toISOString(),
});

export async function digitalTwinRoutes(
  app: App,
  _ctx: AppContext,
  { digitalTwins, twinStatistics }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/digital-twins',
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary: 'Digital twins of an account (twins only): search, filters (with NOT), sort, paging',
        querystring: DigitalTwinListQuery,
        response: { 200: listReply(DigitalTwinReply), ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const params = parseListQuery(q, DIGITAL_TWIN_SORTABLE, 'title');
      const { statuses, rest } = splitStatusFilter(q);
      const result = await digitalTwins.list(
        principal(request),
        params,
        {
          ...(q.accountId ? { accountId: q.accountId } : {}),
          ...(q.parentId ? { parentId: q.parentId } : {}),
          ...(q.referenceId !== undefined ? { referenceId: q.referenceId } : {}),
          statuses,
          conditions: parseDeviceFilter(rest),
        },
        q.after,
      );
      return { data: result.data.map(digitalTwinDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/digital-twins/statistics',
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary: 'Counts of twins and states, and a sample of the most recently changed twins',
        querystring: TwinStatisticsQuery,
        response: { 200: TwinStatisticsReply, ...errorResponses },
      },
    },
    async (request) => twinStatistics.statistics(principal(request), request.query),
  );

  app.get(
    '/xapi/v1/digital-twins/:id',
    {
      config: { auth: 'principal', permission: READ, resource: 'digitalTwin' },
      schema: {
        tags,
        summary: 'One digital twin with its hierarchy and states',
        params: IdParams,
        response: { 200: DigitalTwinReply, ...errorResponses },
      },
    },
    async (request) => digitalTwinDto(await digitalTwins.show(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/digital-twins',
    {
      config: { auth: 'principal', permission: MANAGE },
      schema: {
        tags,
        summary:
          'Create a digital twin (useParentScope defaults to true; ?geocode=true resolves the address)',
        querystring: GeocodeQuery,
        body: DigitalTwinCreate,
        response: { 201: DigitalTwinReply, ...writeResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(
          digitalTwinDto(
            await digitalTwins.create(principal(request), request.body, request.query.geocode ?? false),
          ),
        ),
  );

  app.put(
    '/xapi/v1/digital-twins/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'digitalTwin' },
      schema: {
        tags,
        summary: 'Change a twin (partial; states stay untouched; a new parentId moves the subtree)',
        params: IdParams,
        querystring: GeocodeQuery,
        body: DigitalTwinUpdate,
        response: { 200: DigitalTwinReply, ...writeResponses },
      },
    },
    async (request) =>
      digitalTwinDto(
        await digitalTwins.update(
          principal(request),
          request.params.id,
          request.body,
          request.query.geocode ?? false,
        ),
      ),
  );

  app.delete(
    '/xapi/v1/digital-twins/:id/address',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'digitalTwin' },
      schema: {
        tags,
        summary: 'Delete the address of a twin, with its coordinates',
        params: IdParams,
        response: { 200: DigitalTwinReply, ...errorResponses },
      },
    },
    async (request) =>
      digitalTwinDto(await digitalTwins.deleteAddress(principal(request), request.params.id)),
  );

  app.delete(
    '/xapi/v1/digital-twins/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'digitalTwin' },
      schema: {
        tags,
        summary: 'Delete a twin with its data states; its children become root twins',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await digitalTwins.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
