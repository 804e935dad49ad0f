import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { IntegrationFlow, IntegrationFlowRun } from './flow.entities.js';
import {
  AccountListQuery,
  FlowRunsReply,
  IntegrationFlowCreate,
  IntegrationFlowReply,
  IntegrationFlowUpdate,
} from './flow.schemas.js';
import { INTEGRATION_FLOW_SORTABLE } from './integration-flow.service.js';

const tags = ['integration-flows'];
const READ = 'integrationFlow.read';
const MANAGE = 'integrationFlow.manage';
const base = '/xapi/v1/integration-flows';

export const integrationFlowDto = (f: IntegrationFlow) => ({
  id: f.id,
  accountId: f.account.id,
  title: f.title,
  description: f.description,
  active: f.active,
  source: f.source as unknown as Record<string, unknown>,
  steps: f.steps,
  targets: f.targets as unknown as Array<Record<string, unknown>>,
  permissionScopeIds: f.permissionScopeIds,
  createdAt: f.createdAt.toISOString(),
  updatedAt: f.updatedAt.toISOString(),
});

const runDto = (r: IntegrationFlowRun) => ({
  id: r.id,
  trigger: r.trigger,
  outcome: r.outcome,
  input: r.input,
  output: r.output,
  error: r.error,
  deliveries: r.deliveries,
  durationMs: r.durationMs,
  startedAt: r.startedAt.toISOString(),
});

export async function integrationFlowRoutes(
  app: App,
  _ctx: AppContext,
  { integrationFlows }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    base,
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary:
          'Integration flows of an account: search in the title, sort (title, createdAt, updatedAt), paging',
        querystring: AccountListQuery,
        response: { 200: listReply(IntegrationFlowReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, INTEGRATION_FLOW_SORTABLE, 'title');
      const result = await integrationFlows.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(integrationFlowDto), meta: result.meta };
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: { auth: 'principal', permission: READ, resource: 'integrationFlow' },
      schema: {
        tags,
        summary: 'One integration flow',
        params: IdParams,
        response: { 200: IntegrationFlowReply, ...errorResponses },
      },
    },
    async (request) => integrationFlowDto(await integrationFlows.get(principal(request), request.params.id)),
  );

  app.post(
    base,
    {
      config: { auth: 'principal', permission: MANAGE },
      schema: {
        tags,
        summary:
          'Create a flow: source (packets or alarm entries) → filters and transformers in order → outgoing connectors',
        body: IntegrationFlowCreate,
        response: { 201: IntegrationFlowReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(integrationFlowDto(await integrationFlows.create(principal(request), request.body))),
  );

  app.put(
    `${base}/:id`,
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'integrationFlow' },
      schema: {
        tags,
        summary: 'Change a flow (fields left out keep their value)',
        params: IdParams,
        body: IntegrationFlowUpdate,
        response: { 200: IntegrationFlowReply, ...errorResponses },
      },
    },
    async (request) =>
      integrationFlowDto(await integrationFlows.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    `${base}/:id`,
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'integrationFlow' },
      schema: {
        tags,
        summary: 'Delete a flow and its runs',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await integrationFlows.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  for (const [action, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    app.post(
      `${base}/:id/${action}`,
      {
        config: { auth: 'principal', permission: MANAGE, resource: 'integrationFlow' },
        schema: {
          tags,
          summary: active ? 'Activate a flow' : 'Deactivate a flow: it runs on nothing until activated',
          params: IdParams,
          response: { 200: IntegrationFlowReply, ...errorResponses },
        },
      },
      async (request) =>
        integrationFlowDto(await integrationFlows.setActive(principal(request), request.params.id, active)),
    );
  }

  app.get(
    `${base}/:id/runs`,
    {
      config: { auth: 'principal', permission: READ, resource: 'integrationFlow' },
      schema: {
        tags,
        summary:
          'The latest runs of a flow, newest first: input, output, error and what each target answered',
        params: IdParams,
        response: { 200: FlowRunsReply, ...errorResponses },
      },
    },
    async (request) => ({
      data: (await integrationFlows.runs(principal(request), request.params.id)).map(runDto),
    }),
  );
}
