import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { ConnectorMonitoringRule } from './connector-monitoring-rule.entity.js';
import {
  MonitoringRuleCreate,
  MonitoringRuleListQuery,
  MonitoringRuleReply,
  MonitoringRuleUpdate,
} from './connector-monitoring.schemas.js';
import { MONITORING_RULE_SORTABLE } from './connector-monitoring.service.js';

const tags = ['connector-monitoring'];

export const monitoringRuleDto = (r: ConnectorMonitoringRule) => ({
  id: r.id,
  accountId: r.account.id,
  connectorId: r.connector.id,
  title: r.title,
  type: r.type,
  params: r.params as Record<string, unknown>,
  active: r.active,
  mailConnectorId: r.mailConnector?.id ?? null,
  mailTo: r.mailTo,
  firing: r.state.firing,
  lastFiredAt: r.lastFiredAt?.toISOString() ?? null,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

export async function connectorMonitoringRoutes(
  app: App,
  _ctx: AppContext,
  { connectorMonitoring, connectors }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const base = '/xapi/v1/connector-monitoring-rules';

  app.get(
    base,
    {
      config: { auth: 'principal', permission: 'connectorMonitoring.read' },
      schema: {
        tags,
        summary: 'Connector monitoring rules of an account',
        querystring: MonitoringRuleListQuery,
        response: { 200: listReply(MonitoringRuleReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, MONITORING_RULE_SORTABLE, 'title');
      const result = await connectorMonitoring.list(principal(request), params, request.query);
      return { data: result.data.map(monitoringRuleDto), meta: result.meta };
    },
  );

  app.post(
    '/xapi/v1/connectors/:id/monitoring-rules',
    {
      config: { auth: 'principal', permission: 'connectorMonitoring.manage', resource: 'connector' },
      schema: {
        tags,
        summary: 'Watch a connector (the rule lives in the connector’s account)',
        params: IdParams,
        body: MonitoringRuleCreate,
        response: { 201: MonitoringRuleReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const connector = await connectors.get(principal(request), request.params.id);
      const rule = await connectorMonitoring.create(principal(request), {
        ...request.body,
        connectorId: connector.id,
        accountId: connector.account.id,
      });
      return reply.status(201).send(monitoringRuleDto(rule));
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: {
        auth: 'principal',
        permission: 'connectorMonitoring.read',
        resource: 'connectorMonitoringRule',
      },
      schema: {
        tags,
        summary: 'One connector monitoring rule',
        params: IdParams,
        response: { 200: MonitoringRuleReply, ...errorResponses },
      },
    },
    async (request) =>
      monitoringRuleDto(await connectorMonitoring.get(principal(request), request.params.id)),
  );

  app.put(
    `${base}/:id`,
    {
      config: {
        auth: 'principal',
        permission: 'connectorMonitoring.manage',
        resource: 'connectorMonitoringRule',
      },
      schema: {
        tags,
        summary: 'Change a rule (its running figures start afresh)',
        params: IdParams,
        body: MonitoringRuleUpdate,
        response: { 200: MonitoringRuleReply, ...errorResponses },
      },
    },
    async (request) =>
      monitoringRuleDto(
        await connectorMonitoring.update(principal(request), request.params.id, request.body),
      ),
  );

  app.delete(
    `${base}/:id`,
    {
      config: {
        auth: 'principal',
        permission: 'connectorMonitoring.manage',
        resource: 'connectorMonitoringRule',
      },
      schema: {
        tags,
        summary: 'Delete a rule',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await connectorMonitoring.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
