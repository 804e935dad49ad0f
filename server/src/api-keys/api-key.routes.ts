import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { ApiKey } from './api-key.entity.js';
import {
  ApiKeyCreate,
  ApiKeyCreatedReply,
  ApiKeyListQuery,
  ApiKeyReply,
  ApiKeyUpdate,
} from './api-key.schemas.js';
import { API_KEY_SORTABLE } from './api-key.service.js';

const tags = ['api-keys'];

/** Never includes the key or its hash. */
export const apiKeyDto = (key: ApiKey) => ({
  id: key.id,
  accountId: key.account.id,
  title: key.title,
  prefix: key.prefix,
  permissions: key.permissions,
  active: key.active,
  createdByUserId: key.createdByUserId,
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  createdAt: key.createdAt.toISOString(),
  updatedAt: key.updatedAt.toISOString(),
});

export async function apiKeyRoutes(app: App, _ctx: AppContext, { apiKeys }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/api-keys',
    {
      config: { auth: 'principal', permission: 'apiKey.read' },
      schema: {
        tags,
        summary: 'API keys of an account (without the keys themselves)',
        querystring: ApiKeyListQuery,
        response: { 200: listReply(ApiKeyReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, API_KEY_SORTABLE, 'title');
      const result = await apiKeys.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(apiKeyDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/api-keys/:id',
    {
      config: { auth: 'principal', permission: 'apiKey.read', resource: 'apiKey' },
      schema: {
        tags,
        summary: 'One API key (without the key)',
        params: IdParams,
        response: { 200: ApiKeyReply, ...errorResponses },
      },
    },
    async (request) => apiKeyDto(await apiKeys.get(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/api-keys',
    {
      config: { auth: 'principal', permission: 'apiKey.manage' },
      schema: {
        tags,
        summary: 'Create an API key; the reply carries the key once (only permissions the caller holds)',
        body: ApiKeyCreate,
        response: { 201: ApiKeyCreatedReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { apiKey, key } = await apiKeys.create(principal(request), request.body);
      return reply.status(201).send({ ...apiKeyDto(apiKey), key });
    },
  );

  app.put(
    '/xapi/v1/api-keys/:id',
    {
      config: { auth: 'principal', permission: 'apiKey.manage', resource: 'apiKey' },
      schema: {
        tags,
        summary: 'Change title, permissions or active flag of an API key',
        params: IdParams,
        body: ApiKeyUpdate,
        response: { 200: ApiKeyReply, ...errorResponses },
      },
    },
    async (request) => apiKeyDto(await apiKeys.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/api-keys/:id',
    {
      config: { auth: 'principal', permission: 'apiKey.manage', resource: 'apiKey' },
      schema: {
        tags,
        summary: 'Delete an API key',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await apiKeys.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
