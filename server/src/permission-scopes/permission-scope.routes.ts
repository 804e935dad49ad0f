import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { PermissionScope } from './permission-scope.entity.js';
import {
  PermissionScopeCreate,
  PermissionScopeListQuery,
  PermissionScopeReply,
  PermissionScopeUpdate,
} from './permission-scope.schemas.js';
import { PERMISSION_SCOPE_SORTABLE } from './permission-scope.service.js';

const tags = ['permission-scopes'];

export const permissionScopeDto = (scope: PermissionScope) => ({
  id: scope.id,
  accountId: scope.account.id,
  title: scope.title,
  description: scope.description,
  createdAt: scope.createdAt.toISOString(),
  updatedAt: scope.updatedAt.toISOString(),
});

export async function permissionScopeRoutes(
  app: App,
  _ctx: AppContext,
  { permissionScopes }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/permission-scopes',
    {
      config: { auth: 'principal', permission: 'permissionScope.read' },
      schema: {
        tags,
        summary: 'Permission scopes (access areas) of an account; restricted users see only their own',
        querystring: PermissionScopeListQuery,
        response: { 200: listReply(PermissionScopeReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, PERMISSION_SCOPE_SORTABLE, 'title');
      const result = await permissionScopes.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(permissionScopeDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/permission-scopes/:id',
    {
      config: { auth: 'principal', permission: 'permissionScope.read', resource: 'permissionScope' },
      schema: {
        tags,
        summary: 'One permission scope',
        params: IdParams,
        response: { 200: PermissionScopeReply, ...errorResponses },
      },
    },
    async (request) => permissionScopeDto(await permissionScopes.get(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/permission-scopes',
    {
      config: { auth: 'principal', permission: 'permissionScope.manage' },
      schema: {
        tags,
        summary: 'Create a permission scope in an account',
        body: PermissionScopeCreate,
        response: { 201: PermissionScopeReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(permissionScopeDto(await permissionScopes.create(principal(request), request.body))),
  );

  app.put(
    '/xapi/v1/permission-scopes/:id',
    {
      config: { auth: 'principal', permission: 'permissionScope.manage', resource: 'permissionScope' },
      schema: {
        tags,
        summary: 'Change a permission scope',
        params: IdParams,
        body: PermissionScopeUpdate,
        response: { 200: PermissionScopeReply, ...errorResponses },
      },
    },
    async (request) =>
      permissionScopeDto(await permissionScopes.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/permission-scopes/:id',
    {
      config: { auth: 'principal', permission: 'permissionScope.manage', resource: 'permissionScope' },
      schema: {
        tags,
        summary: 'Delete a permission scope no user is restricted to',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await permissionScopes.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
