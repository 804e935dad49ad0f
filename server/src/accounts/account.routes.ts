import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { Account } from './account.entity.js';
import type { Announcement } from './announcement.entity.js';
import { ACCOUNT_SORTABLE, shownParentId, type AccountService } from './account.service.js';
import {
  AccountCreate,
  AccountListQuery,
  AccountReply,
  AccountUpdate,
  AnnouncementCreate,
  AnnouncementReply,
  AnnouncementStateUpdate,
  AnnouncementUpdate,
} from './account.schemas.js';

const tags = ['accounts'];

export function accountDto(
  account: Account,
  accounts: AccountService,
  principal: Principal,
  effectiveUiSettings?: Record<string, unknown>,
) {
  return {
    id: account.id,
    parentId: shownParentId(principal, account),
    hierarchyLevel: account.hierarchyLevel,
    title: account.title,
    description: account.description,
    mandatoryTwoFactor: account.mandatoryTwoFactor,
    retentionMonths: account.retentionMonths,
    timeZone: account.timeZone,
    uiSettings: account.uiSettings,
    ...(effectiveUiSettings ? { effectiveUiSettings } : {}),
    metaInfo: account.metaInfo,
    modules: account.modules,
    oauthConfig: accounts.publicOAuthConfig(account) as Record<string, unknown> | null,
    createdAt: account.createdAt.toISOString(),
    updatedAt: account.updatedAt.toISOString(),
  };
}

/** Inherited announcements come from an account above the reader's: its id is not shown. */
export const announcementDto = (
  a: Announcement,
  extra: { inherited?: boolean; dismissed?: boolean } = {},
) => ({
  id: a.id,
  accountId: extra.inherited ? null : a.account.id,
  title: a.title,
  message: a.message,
  severity: a.severity,
  active: a.active,
  ...extra,
  createdAt: a.createdAt.toISOString(),
  updatedAt: a.updatedAt.toISOString(),
});

export async function accountRoutes(
  app: App,
  _ctx: AppContext,
  { accounts, announcements }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const one = async (account: Account, caller: Principal) =>
    accountDto(account, accounts, caller, await accounts.effectiveUiSettings(account));

  app.get(
    '/xapi/v1/accounts',
    {
      config: { auth: 'principal', permission: 'account.read' },
      schema: {
        tags,
        summary: 'List the accounts the caller may reach (own and sub-accounts)',
        querystring: AccountListQuery,
        response: { 200: listReply(AccountReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, ACCOUNT_SORTABLE, 'title');
      const result = await accounts.list(principal(request), params, request.query.parentId);
      return {
        data: result.data.map((a) => accountDto(a, accounts, principal(request))),
        meta: result.meta,
      };
    },
  );

  app.post(
    '/xapi/v1/accounts',
    {
      config: { auth: 'principal', permission: 'account.manage' },
      schema: {
        tags,
        summary: 'Create a sub-account (parentId defaults to the caller’s account)',
        body: AccountCreate,
        response: { 201: AccountReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await one(await accounts.create(principal(request), request.body), principal(request))),
  );

  app.get(
    '/xapi/v1/accounts/:id',
    {
      config: { auth: 'principal', permission: 'account.read', resource: 'account' },
      schema: {
        tags,
        summary: 'One account, with hierarchyLevel',
        params: IdParams,
        response: { 200: AccountReply, ...errorResponses },
      },
    },
    async (request) =>
      one(await accounts.reachable(principal(request), request.params.id), principal(request)),
  );

  app.put(
    '/xapi/v1/accounts/:id',
    {
      config: { auth: 'principal', permission: 'account.manage', resource: 'account' },
      schema: {
        tags,
        summary: 'Update an account',
        params: IdParams,
        body: AccountUpdate,
        response: { 200: AccountReply, ...errorResponses },
      },
    },
    async (request) =>
      one(await accounts.update(principal(request), request.params.id, request.body), principal(request)),
  );

  app.delete(
    '/xapi/v1/accounts/:id',
    {
      config: { auth: 'principal', permission: 'account.manage', resource: 'account' },
      schema: {
        tags,
        summary: 'Delete an account without sub-accounts',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await accounts.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/xapi/v1/accounts/:id/announcements',
    {
      config: { auth: 'principal', permission: 'announcement.read', resource: 'account' },
      schema: {
        tags,
        summary: 'Announcements an account publishes',
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(AnnouncementReply) }), ...errorResponses },
      },
    },
    async (request) => ({
      data: (await announcements.listOwn(principal(request), request.params.id)).map((a) =>
        announcementDto(a),
      ),
    }),
  );

  app.post(
    '/xapi/v1/accounts/:id/announcements',
    {
      config: { auth: 'principal', permission: 'announcement.manage', resource: 'account' },
      schema: {
        tags,
        summary: 'Publish an announcement to an account and its sub-accounts',
        params: IdParams,
        body: AnnouncementCreate,
        response: { 201: AnnouncementReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(
          announcementDto(await announcements.create(principal(request), request.params.id, request.body)),
        ),
  );

  app.get(
    '/xapi/v1/announcements',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Announcements the signed-in user sees, own account and inherited, with dismissal state',
        response: { 200: Type.Object({ data: Type.Array(AnnouncementReply) }), ...errorResponses },
      },
    },
    async (request) => {
      const me = principal(request);
      const account = await accounts.reachable(me, me.accountId);
      const visible = await announcements.visibleTo(me.userId!, account);
      return {
        data: visible.map((v) =>
          announcementDto(v.announcement, { inherited: v.inherited, dismissed: v.dismissed }),
        ),
      };
    },
  );

  app.put(
    '/xapi/v1/announcements/:id',
    {
      config: { auth: 'principal', permission: 'announcement.manage', resource: 'announcement' },
      schema: {
        tags,
        summary: 'Change an announcement',
        params: IdParams,
        body: AnnouncementUpdate,
        response: { 200: AnnouncementReply, ...errorResponses },
      },
    },
    async (request) =>
      announcementDto(await announcements.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/announcements/:id',
    {
      config: { auth: 'principal', permission: 'announcement.manage', resource: 'announcement' },
      schema: {
        tags,
        summary: 'Withdraw an announcement',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await announcements.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.put(
    '/xapi/v1/announcements/:id/state',
    {
      config: { auth: 'user', resource: 'announcement' },
      schema: {
        tags,
        summary: 'Dismiss or restore an announcement for the signed-in user (inherited ones too)',
        params: IdParams,
        body: AnnouncementStateUpdate,
        response: { 200: AnnouncementReply, ...errorResponses },
      },
    },
    async (request) => {
      const v = await announcements.setState(principal(request), request.params.id, request.body.dismissed);
      return announcementDto(v.announcement, { inherited: v.inherited, dismissed: v.dismissed });
    },
  );
}
