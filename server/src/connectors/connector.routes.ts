import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { Connector } from './connector.entity.js';
import {
  connectorBodyValidator,
  ConnectorCreate,
  ConnectorCreatedReply,
  ConnectorKindReply,
  connectorKindDto,
  ConnectorListQuery,
  ConnectorLogReply,
  ConnectorReply,
  ConnectorUpdate,
  CredentialsReply,
  LogsQuery,
} from './connector.schemas.js';
import { CONNECTOR_SORTABLE, type ConnectorService } from './connector.service.js';
import { CONNECTOR_KIND_DESCRIPTORS } from './kinds/index.js';

const tags = ['connectors'];

/** Never includes the broker password hash or the webhook token itself (only its URL). */
export const connectorDto = (service: ConnectorService, c: Connector) => {
  const counters = service.counters(c);
  return {
    id: c.id,
    accountId: c.account.id,
    title: c.title,
    description: c.description,
    type: c.type,
    direction: service.kind(c.type).direction,
    capabilities: [...service.capabilities(c)],
    active: c.active,
    apiEndpoint: service.apiEndpoint(c),
    brokerUsername: c.brokerUsername,
    config: service.publicConfig(c),
    packetsIn: counters.packetsIn,
    packetsFailed: counters.packetsFailed,
    lastPacketAt: counters.lastPacketAt?.toISOString() ?? null,
    creationDate: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
};

export async function connectorRoutes(
  app: App,
  _ctx: AppContext,
  { connectors, mqttIn, connectorTelemetry }: Services,
): Promise<void> {
  // Outside main.ts (tests, embedding) nobody runs the lifecycle: closing the app must end the clients.
  app.addHook('onClose', async () => {
    await mqttIn.stop();
    await connectorTelemetry.stop();
  });
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const dto = (c: Connector) => connectorDto(connectors, c);
  const base = '/xapi/v1/connectors';

  app.get(
    base,
    {
      config: { auth: 'principal', permission: 'connector.read' },
      schema: {
        tags,
        summary: 'Connectors of an account; filter by `type`',
        querystring: ConnectorListQuery,
        response: { 200: listReply(ConnectorReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, CONNECTOR_SORTABLE, 'title');
      const result = await connectors.list(principal(request), params, request.query);
      return { data: result.data.map(dto), meta: result.meta };
    },
  );

  const kinds = { data: CONNECTOR_KIND_DESCRIPTORS.map(connectorKindDto) };
  app.get(
    '/xapi/v1/connector-kinds',
    {
      config: { auth: 'principal', permission: 'connector.read' },
      schema: {
        tags,
        summary: 'Every connector kind: direction, capabilities, settings schema and device rules',
        response: { 200: Type.Object({ data: Type.Array(ConnectorKindReply) }), ...errorResponses },
      },
    },
    () => kinds,
  );

  app.get(
    `${base}/:id`,
    {
      config: { auth: 'principal', permission: 'connector.read', resource: 'connector' },
      schema: {
        tags,
        summary: 'One connector',
        params: IdParams,
        response: { 200: ConnectorReply, ...errorResponses },
      },
    },
    async (request) => dto(await connectors.get(principal(request), request.params.id)),
  );

  app.post(
    base,
    {
      config: { auth: 'principal', permission: 'connector.manage' },
      validatorCompiler: connectorBodyValidator,
      schema: {
        tags,
        summary: 'Create a connector; broker credentials or the webhook URL are in the reply once',
        body: ConnectorCreate,
        response: { 201: ConnectorCreatedReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { connector, credentials } = await connectors.create(principal(request), request.body);
      return reply.status(201).send({ ...dto(connector), credentials });
    },
  );

  app.put(
    `${base}/:id`,
    {
      config: { auth: 'principal', permission: 'connector.manage', resource: 'connector' },
      validatorCompiler: connectorBodyValidator,
      schema: {
        tags,
        summary: 'Change title, description or settings (masked secrets keep their value)',
        params: IdParams,
        body: ConnectorUpdate,
        response: { 200: ConnectorReply, ...errorResponses },
      },
    },
    async (request) => dto(await connectors.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    `${base}/:id`,
    {
      config: { auth: 'principal', permission: 'connector.manage', resource: 'connector' },
      schema: {
        tags,
        summary: 'Delete a connector; 409 DELETE_BLOCKED while devices use it',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await connectors.delete(principal(request), request.params.id);
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
        config: { auth: 'principal', permission: 'connector.manage', resource: 'connector' },
        schema: {
          tags,
          summary: active
            ? 'Activate a connector'
            : 'Deactivate a connector: it ingests nothing and its credentials are refused',
          params: IdParams,
          response: { 200: ConnectorReply, ...errorResponses },
        },
      },
      async (request) => dto(await connectors.setActive(principal(request), request.params.id, active)),
    );
  }

  app.post(
    `${base}/:id/credentials`,
    {
      config: { auth: 'principal', permission: 'connector.manage', resource: 'connector' },
      schema: {
        tags,
        summary: 'Issue a new broker password or webhook URL; the old one stops working',
        params: IdParams,
        response: { 200: CredentialsReply, ...errorResponses },
      },
    },
    async (request) => {
      const { credentials } = await connectors.rotateCredentials(principal(request), request.params.id);
      return { credentials };
    },
  );

  app.get(
    `${base}/:id/logs`,
    {
      config: { auth: 'principal', permission: 'connector.read', resource: 'connector' },
      schema: {
        tags,
        summary: 'Latest connector log entries, newest first (at most 100)',
        params: IdParams,
        querystring: LogsQuery,
        response: { 200: Type.Object({ data: Type.Array(ConnectorLogReply) }), ...errorResponses },
      },
    },
    async (request) => {
      const rows = await connectors.logs(principal(request), request.params.id, request.query.limit);
      return {
        data: rows.map((l) => ({
          id: l.id,
          level: l.level,
          message: l.message,
          details: l.details,
          createdAt: l.createdAt.toISOString(),
        })),
      };
    },
  );
}
