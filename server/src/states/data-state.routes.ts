import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { DataState } from './data-state.entity.js';
import {
  DataStateCreate,
  DataStateListQuery,
  DataStateReply,
  DataStateUpdate,
  StateSourceKindReply,
  stateSourceKindDto,
} from './data-state.schemas.js';
import { STATE_SOURCE_DESCRIPTORS } from './sources/index.js';
import type { StateSourceDescriptor } from './sources/state-source-kind.js';
import { DATA_STATE_SORTABLE } from './data-state.service.js';

const tags = ['data-states'];
const READ = 'state.read';
const MANAGE = 'state.manage';

export const dataStateDto = (s: DataState) => ({
  id: s.id,
  twinId: s.twin.id,
  accountId: s.account.id,
  key: s.key,
  title: s.title,
  valueType: s.valueType,
  unit: s.unit,
  source: (s.source as unknown as Record<string, unknown> & { type: string }) ?? null,
  meta: s.meta,
  value: s.value ?? null,
  timestamp: s.timestamp?.toISOString() ?? null,
  warning: s.warning,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

export async function dataStateRoutes(app: App, _ctx: AppContext, { dataStates }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  const sources = {
    data: (STATE_SOURCE_DESCRIPTORS as readonly StateSourceDescriptor[]).map(stateSourceKindDto),
  };
  app.get(
    '/xapi/v1/state-sources',
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary: 'Every data-state source type: its settings schema and console form',
        response: { 200: Type.Object({ data: Type.Array(StateSourceKindReply) }), ...errorResponses },
      },
    },
    () => sources,
  );

  app.get(
    '/xapi/v1/digital-twins/:id/states',
    {
      config: { auth: 'principal', permission: READ, resource: 'digitalTwin' },
      schema: {
        tags,
        summary:
          'Data states of a twin (sort by key, title, createdAt, updatedAt; searchItems on key and title)',
        params: IdParams,
        querystring: DataStateListQuery,
        response: { 200: listReply(DataStateReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, DATA_STATE_SORTABLE, 'key');
      const result = await dataStates.list(principal(request), request.params.id, params);
      return { data: result.data.map(dataStateDto), meta: result.meta };
    },
  );

  app.post(
    '/xapi/v1/digital-twins/:id/states',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'digitalTwin' },
      schema: {
        tags,
        summary: 'Add a data state (409 DUPLICATE_STATE_KEY, 422 CIRCULAR_STATE_REFERENCE)',
        params: IdParams,
        body: DataStateCreate,
        response: { 201: DataStateReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(dataStateDto(await dataStates.create(principal(request), request.params.id, request.body))),
  );

  app.get(
    '/xapi/v1/states/:id',
    {
      config: { auth: 'principal', permission: READ, resource: 'state' },
      schema: {
        tags,
        summary: 'One data state with its current value',
        params: IdParams,
        response: { 200: DataStateReply, ...errorResponses },
      },
    },
    async (request) => dataStateDto(await dataStates.get(principal(request), request.params.id)),
  );

  app.put(
    '/xapi/v1/states/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'state' },
      schema: {
        tags,
        summary:
          'Change a data state; a payload as read back is accepted, and an unchanged value keeps its timestamp',
        params: IdParams,
        body: DataStateUpdate,
        response: { 200: DataStateReply, ...errorResponses },
      },
    },
    async (request) =>
      dataStateDto(await dataStates.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/states/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'state' },
      schema: {
        tags,
        summary: 'Delete a data state (409 DELETE_BLOCKED while other states aggregate it)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await dataStates.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
