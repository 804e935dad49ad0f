import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { IssuedInvitation } from './invitation.service.js';
import {
  Invitation,
  MeReply,
  UserCreate,
  UserCreatedReply,
  UserListQuery,
  UserReply,
  UserRoleParams,
  UserUpdate,
} from './user.schemas.js';
import { USER_SORTABLE, type UserView } from './user.service.js';

const tags = ['users'];

/** Never includes the password hash or anything of the TOTP seed. */
export function userDto({ user, invitationPending }: UserView) {
  const roles = user.roles.getItems();
  return {
    id: user.id,
    accountId: user.account.id,
    email: user.email,
    name: user.name,
    locale: user.locale,
    active: user.active,
    roleIds: roles.map((r) => r.id),
    roles: roles.map((r) => ({ id: r.id, name: r.name, builtIn: r.builtIn })),
    permissionScopeIds: user.permissionScopes.getItems().map((s) => s.id),
    twoFactorEnabled: user.totpEnabled,
    passwordSet: !!user.passwordHash,
    invitationPending,
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

const invitationDto = (invitation: IssuedInvitation) => ({
  expiresAt: invitation.expiresAt.toISOString(),
  delivery: invitation.delivery,
  ...(invitation.link ? { link: invitation.link } : {}),
});

export async function userRoutes(app: App, _ctx: AppContext, { users }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/users',
    {
      config: { auth: 'principal', permission: 'user.read' },
      schema: {
        tags,
        summary: 'Users of an account; searchItems looks at name and e-mail',
        querystring: UserListQuery,
        response: { 200: listReply(UserReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, USER_SORTABLE, 'name');
      const result = await users.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(userDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/users/me',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'The signed-in user, with effective permissions',
        response: { 200: MeReply, ...errorResponses },
      },
    },
    async (request) => {
      const view = await users.me(principal(request));
      const permissions = [...new Set(view.user.roles.getItems().flatMap((r) => r.permissions))];
      return { ...userDto(view), permissions };
    },
  );

  app.get(
    '/xapi/v1/users/:id',
    {
      config: { auth: 'principal', permission: 'user.read', resource: 'user' },
      schema: {
        tags,
        summary: 'One user',
        params: IdParams,
        response: { 200: UserReply, ...errorResponses },
      },
    },
    async (request) => userDto(await users.get(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/users',
    {
      config: { auth: 'principal', permission: 'UserManagement.create' },
      schema: {
        tags,
        summary:
          'Create a user with roles; without password an invitation is mailed unless suppressInvitation',
        body: UserCreate,
        response: { 201: UserCreatedReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await users.createManaged(principal(request), request.body);
      return reply.status(201).send({
        ...userDto(created),
        invitation: created.invitation ? invitationDto(created.invitation) : null,
      });
    },
  );

  app.put(
    '/xapi/v1/users/:id',
    {
      config: { auth: 'principal', permission: 'user.manage', resource: 'user' },
      schema: {
        tags,
        summary: 'Change name, locale, active flag or permission scopes of a user',
        params: IdParams,
        body: UserUpdate,
        response: { 200: UserReply, ...errorResponses },
      },
    },
    async (request) => userDto(await users.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/users/:id',
    {
      config: { auth: 'principal', permission: 'user.manage', resource: 'user' },
      schema: {
        tags,
        summary: 'Delete a user',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await users.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.put(
    '/xapi/v1/users/:id/roles/:roleId',
    {
      config: { auth: 'principal', permission: 'user.manage', resource: 'user' },
      schema: {
        tags,
        summary: 'Give a user one more role; nothing else about the user changes',
        params: UserRoleParams,
        response: { 200: UserReply, ...errorResponses },
      },
    },
    async (request) =>
      userDto(await users.addRole(principal(request), request.params.id, request.params.roleId)),
  );

  app.delete(
    '/xapi/v1/users/:id/roles/:roleId',
    {
      config: { auth: 'principal', permission: 'user.manage', resource: 'user' },
      schema: {
        tags,
        summary: 'Take one role from a user; nothing else about the user changes',
        params: UserRoleParams,
        response: { 200: UserReply, ...errorResponses },
      },
    },
    async (request) =>
      userDto(await users.removeRole(principal(request), request.params.id, request.params.roleId)),
  );

  app.post(
    '/xapi/v1/users/:id/invitation',
    {
      config: { auth: 'principal', permission: 'user.manage', resource: 'user' },
      schema: {
        tags,
        summary: 'Send a new invitation link to a user without password (earlier links stop working)',
        params: IdParams,
        response: { 200: Invitation, ...errorResponses },
      },
    },
    async (request) => invitationDto(await users.reinvite(principal(request), request.params.id)),
  );
}
