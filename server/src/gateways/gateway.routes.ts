import { Type } from 'typebox';
import type { Principal } from '../auth/principal.js';
import type { App, AppContext } from '../context.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { Services } from '../services.js';
import type { Gateway } from './gateway.entity.js';
import type { GatewayFigures } from './gateway-figures.js';
import {
  GatewayCreate,
  GatewayImportBody,
  GatewayImportReply,
  GatewayListQuery,
  GatewayReply,
  GatewayUpdate,
  HeardDeviceQuery,
  HeardDeviceReply,
  UnknownGatewayReply,
  UnknownGatewaysQuery,
} from './gateway.schemas.js';
import { GATEWAY_SORTABLE } from './gateway.service.js';

const tags = ['gateways'];
const NO_FIGURES: GatewayFigures = { uplinks24h: 0, meanRssi24h: null, meanSnr24h: null };

export const gatewayDto = (g: Gateway, figures: GatewayFigures = NO_FIGURES) => ({
  id: g.id,
  accountId: g.account.id,
  eui: g.eui,
  networkId: g.networkId,
  title: g.title,
  description: g.description,
  tags: g.tags,
  location:
    g.latitude !== null && g.longitude !== null
      ? { latitude: g.latitude, longitude: g.longitude, altitude: g.altitude }
      : null,
  connectorId: g.connector?.id ?? null,
  permissionScopeId: g.permissionScope?.id ?? null,
  offlineAfterSeconds: g.offlineAfterSeconds,
  status: g.status,
  statusChangedAt: g.statusChangedAt?.toISOString() ?? null,
  lastSeenAt: g.lastSeenAt?.toISOString() ?? null,
  ...figures,
  createdAt: g.createdAt.toISOString(),
  updatedAt: g.updatedAt.toISOString(),
});

/** LoRaWAN gateways (docs/lorawan.md, Gateways). */
export async function gatewayRoutes(
  app: App,
  _ctx: AppContext,
  { gateways, gatewayImport, gatewayReceptions }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const base = '/xapi/v1/gateways';
  const one = async (g: Gateway) => gatewayDto(g, (await gateways.figures([g.id])).get(g.id));
  const read = { auth: 'principal', permission: 'gateway.read', resource: 'gateway' } as const;
  const manage = { auth: 'principal', permission: 'gateway.manage', resource: 'gateway' } as const;

  app.get(
    base,
    {
      config: { auth: 'principal', permission: 'gateway.read' },
      schema: {
        tags,
        summary: 'Gateways of an account, with status and 24 h figures',
        querystring: GatewayListQuery,
        response: { 200: listReply(GatewayReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, GATEWAY_SORTABLE, 'title');
      const result = await gateways.list(principal(request), params, request.query);
      const figures = await gateways.figures(result.data.map((g) => g.id));
      return { data: result.data.map((g) => gatewayDto(g, figures.get(g.id))), meta: result.meta };
    },
  );

  app.post(
    base,
    {
      config: { auth: 'principal', permission: 'gateway.manage' },
      schema: {
        tags,
        summary: 'Register a gateway',
        body: GatewayCreate,
        response: { 201: GatewayReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(gatewayDto(await gateways.create(principal(request), request.body))),
  );

  app.post(
    `${base}/import`,
    {
      config: { auth: 'principal', permission: 'gateway.manage' },
      schema: {
        tags,
        summary: 'Import the gateway list of a network-server connector into its account',
        body: GatewayImportBody,
        response: { 200: GatewayImportReply, ...errorResponses },
      },
    },
    async (request) => gatewayImport.importFrom(principal(request), request.body.connectorId),
  );

  app.get(
    `${base}/unknown`,
    {
      config: { auth: 'principal', permission: 'gateway.read' },
      schema: {
        tags,
        summary: 'Gateways that heard the account’s devices but are not registered (this node, since start)',
        querystring: UnknownGatewaysQuery,
        response: { 200: Type.Object({ data: Type.Array(UnknownGatewayReply) }), ...errorResponses },
      },
    },
    async (request) => {
      const list = await gateways.unknown(
        principal(request),
        request.query.accountId,
        gatewayReceptions.unknown,
      );
      return {
        data: list.map((g) => ({ ...g, lastHeardAt: g.lastHeardAt.toISOString() })),
      };
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: read,
      schema: {
        tags,
        summary: 'One gateway',
        params: IdParams,
        response: { 200: GatewayReply, ...errorResponses },
      },
    },
    async (request) => one(await gateways.get(principal(request), request.params.id)),
  );

  app.get(
    `${base}/:id/devices`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Devices the gateway heard, newest first, with their last RSSI and SNR',
        params: IdParams,
        querystring: HeardDeviceQuery,
        response: { 200: listReply(HeardDeviceReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, [], '');
      const result = await gateways.devicesHeard(principal(request), request.params.id, params);
      return {
        data: result.data.map((d) => ({ ...d, lastHeardAt: d.lastHeardAt.toISOString() })),
        meta: result.meta,
      };
    },
  );

  app.put(
    `${base}/:id`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Change a gateway',
        params: IdParams,
        body: GatewayUpdate,
        response: { 200: GatewayReply, ...errorResponses },
      },
    },
    async (request) => one(await gateways.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    `${base}/:id`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete a gateway (its figures and devices heard go with it)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await gateways.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
