import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { RuleView } from './rule-views.js';
import { RuleCreate, RuleListQuery, RuleReply, RuleUpdate } from './rule.schemas.js';
import { RULE_SORTABLE } from './rule.service.js';
import type { RuleTrigger } from './rule.types.js';

const tags = ['rules'];

export const ruleDto = ({ rule: r, lastRun }: RuleView) => ({
  id: r.id,
  accountId: r.account.id,
  twinId: r.twin?.id ?? null,
  title: r.title,
  description: r.description,
  active: r.active,
  trigger: r.trigger as unknown as Record<string, unknown>,
  commands: r.commands,
  permissionScopeIds: r.permissionScopeIds,
  nextRunAt: r.nextRunAt?.toISOString() ?? null,
  lastFiredAt: r.lastFiredAt ? new Date(r.lastFiredAt).toISOString() : null,
  lastRun: (lastRun as unknown as Record<string, unknown> | null) ?? null,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

export async function ruleRoutes(app: App, _ctx: AppContext, { rules }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/rules',
    {
      config: { auth: 'principal', permission: 'rule.read' },
      schema: {
        tags,
        summary: 'Rules of an account',
        querystring: RuleListQuery,
        response: { 200: listReply(RuleReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, RULE_SORTABLE, 'title');
      const result = await rules.list(principal(request), params, request.query);
      return { data: result.data.map(ruleDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/rules/:id',
    {
      config: { auth: 'principal', permission: 'rule.read', resource: 'rule' },
      schema: {
        tags,
        summary: 'One rule',
        params: IdParams,
        response: { 200: RuleReply, ...errorResponses },
      },
    },
    async (request) => ruleDto(await rules.show(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/rules',
    {
      config: { auth: 'principal', permission: 'rule.manage' },
      schema: {
        tags,
        summary: 'Create a rule (422 INVALID_COMMAND when a command’s settings do not fit the account)',
        body: RuleCreate,
        response: { 201: RuleReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = { ...request.body, trigger: request.body.trigger as RuleTrigger };
      return reply.status(201).send(ruleDto(await rules.create(principal(request), body)));
    },
  );

  app.put(
    '/xapi/v1/rules/:id',
    {
      config: { auth: 'principal', permission: 'rule.manage', resource: 'rule' },
      schema: {
        tags,
        summary: 'Change a rule (a time rule’s schedule restarts from now)',
        params: IdParams,
        body: RuleUpdate,
        response: { 200: RuleReply, ...errorResponses },
      },
    },
    async (request) => {
      const { trigger, ...rest } = request.body;
      const input = { ...rest, ...(trigger ? { trigger: trigger as RuleTrigger } : {}) };
      return ruleDto(await rules.update(principal(request), request.params.id, input));
    },
  );

  app.delete(
    '/xapi/v1/rules/:id',
    {
      config: { auth: 'principal', permission: 'rule.manage', resource: 'rule' },
      schema: {
        tags,
        summary: 'Delete a rule',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await rules.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
