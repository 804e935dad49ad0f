import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import { shownAccountId } from '../accounts/account.service.js';
import { PERMISSIONS } from './permissions.js';
import type { Role } from './role.entity.js';
import {
  PermissionCatalogueReply,
  RoleCreate,
  RoleListQuery,
  RoleReply,
  RoleUpdate,
} from './role.schemas.js';
import { ROLE_SORTABLE } from './role.service.js';

const tags = ['roles'];

/** `above`: accounts above the caller's, whose roles it uses without learning their ids. */
export const roleDto = (role: Role, above: ReadonlySet<string> = new Set()) => ({
  id: role.id,
  accountId: role.account ? shownAccountId(role.account.id, above) : null,
  name: role.name,
  description: role.description,
  permissions: role.permissions,
  builtIn: role.builtIn,
  createdAt: role.createdAt.toISOString(),
  updatedAt: role.updatedAt.toISOString(),
});

export async function roleRoutes(app: App, _ctx: AppContext, { roles, accounts }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/permissions',
    {
      config: { auth: 'principal' },
      schema: {
        tags,
        summary: 'The permission catalogue: every name a role or API key can carry',
        response: { 200: PermissionCatalogueReply, ...errorResponses },
      },
    },
    () => ({ data: [...PERMISSIONS] }),
  );

  app.get(
    '/xapi/v1/roles',
    {
      config: { auth: 'principal', permission: 'role.read' },
      schema: {
        tags,
        summary: 'Roles usable in an account: built-in, its own and its parent accounts’',
        querystring: RoleListQuery,
        response: { 200: listReply(RoleReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, ROLE_SORTABLE, 'name');
      const result = await roles.list(principal(request), params, request.query.accountId);
      const above = await accounts.idsAbove(principal(request));
      return { data: result.data.map((r) => roleDto(r, above)), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/roles/:id',
    {
      config: { auth: 'principal', permission: 'role.read', resource: 'role' },
      schema: {
        tags,
        summary: 'One role',
        params: IdParams,
        response: { 200: RoleReply, ...errorResponses },
      },
    },
    async (request) =>
      roleDto(
        await roles.get(principal(request), request.params.id),
        await accounts.idsAbove(principal(request)),
      ),
  );

  app.post(
    '/xapi/v1/roles',
    {
      config: { auth: 'principal', permission: 'role.manage' },
      schema: {
        tags,
        summary: 'Create a custom role (only with permissions the caller holds)',
        body: RoleCreate,
        response: { 201: RoleReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(roleDto(await roles.create(principal(request), request.body))),
  );

  app.put(
    '/xapi/v1/roles/:id',
    {
      config: { auth: 'principal', permission: 'role.manage', resource: 'role' },
      schema: {
        tags,
        summary: 'Change a custom role; built-in roles answer 403 BUILT_IN_ROLE',
        params: IdParams,
        body: RoleUpdate,
        response: { 200: RoleReply, ...errorResponses },
      },
    },
    async (request) => roleDto(await roles.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/roles/:id',
    {
      config: { auth: 'principal', permission: 'role.manage', resource: 'role' },
      schema: {
        tags,
        summary: 'Delete a custom role no user holds',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await roles.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
