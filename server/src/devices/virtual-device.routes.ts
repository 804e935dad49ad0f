import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { jobDto } from '../jobs/job.routes.js';
import { JobReply } from '../jobs/job.schemas.js';
import { parseListQuery } from '../platform/http/list.js';
import { acceptStreamedBody, StreamedBody, streamedBodyParser } from '../platform/http/streamed-body.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import { parseDeviceFilter } from './virtual-device.filter.js';
import type { DeviceFields } from './virtual-device.rows.js';
import {
  BulkDeleteTagsBody,
  BulkEditBody,
  DeleteRemotelyParams,
  DeviceStateListReply,
  ImportBody,
  ImportQuery,
  PacketListQuery,
  PacketListReply,
  StatisticsQuery,
  StatisticsReply,
  UpdatedReply,
  VirtualDeviceCreate,
  VirtualDeviceListQuery,
  VirtualDeviceReply,
  VirtualDeviceUpdate,
} from './virtual-device.schemas.js';
import { VIRTUAL_DEVICE_SORTABLE } from './virtual-device.order.js';

const tags = ['virtual-devices'];
const READ = 'VirtualDevice.read';
const MANAGE = 'virtualDevice.manage';
/**
 * A text/csv import body: 200,000 devices are about 28 MB. Only here, and only as text/csv, which is
 * streamed (never joined on the main thread); a JSON `{csv}` body keeps the server's body limit,
 * since JSON.parse of a large body would hold the main thread.
 */
const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

export const virtualDeviceDto = (d: DeviceFields) => ({
  id: d.id,
  accountId: d.account.id,
  device_id: d.deviceId,
  title: d.title,
  description: d.description,
  connectorId: d.connector?.id ?? null,
  deviceDriverId: d.driver?.id ?? null,
  deviceTemplateId: d.template?.id ?? null,
  parentId: d.parent?.id ?? null,
  permissionScopeId: d.permissionScope?.id ?? null,
  tags: d.tags,
  groups: d.groups,
  keyValueData: d.keyValueData,
  externalId: d.externalId,
  referenceId: d.referenceId,
  targetReferenceId: d.targetReferenceId,
  operationalStatus: d.operationalStatus,
  activationMethod: d.activationMethod,
  skipFrameCounterCheck: d.skipFrameCounterCheck,
  devEui: d.devEui,
  endDeviceId: d.endDeviceId,
  hasApplicationSessionKey: !!d.applicationSessionKeySealed,
  hasNetworkSessionKey: !!d.networkSessionKeySealed,
  // No packet yet: Unknown is the only health a device can have (spec, States and transitions).
  healthState: d.lastSeen ? d.healthState : 'Unknown',
  healthReason: d.lastSeen ? d.healthReason : null,
  healthCheckedAt: d.healthCheckedAt?.toISOString() ?? null,
  healthConfig: (d.healthConfig as unknown as Record<string, unknown> | null) ?? null,
  lastSeen: d.lastSeen?.toISOString() ?? null,
  lifecycleState: d.lifecycleState,
  lifecycleReason: d.lifecycleReason,
  active: d.active,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

const utf8 = new TextDecoder('utf-8', { fatal: true });
const asText = (payload: Buffer): string | null => {
  try {
    return utf8.decode(payload);
  } catch {
    return null;
  }
};

export async function virtualDeviceRoutes(
  app: App,
  _ctx: AppContext,
  { virtualDevices, virtualDeviceData, jobs }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/virtual-devices',
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary: 'Virtual devices of an account: search, filters (with NOT), sort, paging',
        querystring: VirtualDeviceListQuery,
        response: { 200: listReply(VirtualDeviceReply), ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const params = parseListQuery(q, VIRTUAL_DEVICE_SORTABLE, 'title');
      const result = await virtualDevices.list(
        principal(request),
        params,
        {
          ...(q.accountId ? { accountId: q.accountId } : {}),
          ...(q.connectorId ? { connectorId: q.connectorId } : {}),
          ...(q.deviceTemplateId ? { deviceTemplateId: q.deviceTemplateId } : {}),
          ...(q.deviceDriverId ? { deviceDriverId: q.deviceDriverId } : {}),
          ...(q.parentId ? { parentId: q.parentId } : {}),
          ...(q.healthState ? { healthState: q.healthState } : {}),
          conditions: parseDeviceFilter(q),
        },
        q.after,
      );
      return { data: result.data.map(virtualDeviceDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/virtual-devices/statistics',
    {
      config: { auth: 'principal', permission: READ },
      schema: {
        tags,
        summary: 'Created devices per day (UTC) in a range (default: the last 30 days) and the total',
        querystring: StatisticsQuery,
        response: { 200: StatisticsReply, ...errorResponses },
      },
    },
    async (request) => virtualDeviceData.statistics(principal(request), request.query),
  );

  app.get(
    '/xapi/v1/virtual-devices/:id',
    {
      config: { auth: 'principal', permission: READ, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'One virtual device',
        params: IdParams,
        response: { 200: VirtualDeviceReply, ...errorResponses },
      },
    },
    async (request) => virtualDeviceDto(await virtualDevices.get(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/virtual-devices',
    {
      config: { auth: 'principal', permission: MANAGE },
      schema: {
        tags,
        summary: 'Create a virtual device (device_id unique per connector)',
        body: VirtualDeviceCreate,
        response: { 201: VirtualDeviceReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(virtualDeviceDto(await virtualDevices.create(principal(request), request.body))),
  );

  app.put(
    '/xapi/v1/virtual-devices/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'Change a virtual device; omitted fields (device_id, session keys …) stay as they are',
        params: IdParams,
        body: VirtualDeviceUpdate,
        response: { 200: VirtualDeviceReply, ...errorResponses },
      },
    },
    async (request) =>
      virtualDeviceDto(await virtualDevices.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/virtual-devices/:id',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'Delete a virtual device here only',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await virtualDevices.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/xapi/v1/virtual-devices/:id/delete-remotely/:flag',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary:
          'Delete a device; flag=true also removes it at the network server (device stays in Deleting)',
        params: DeleteRemotelyParams,
        response: { 202: VirtualDeviceReply, 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      const device = await virtualDevices.delete(principal(request), request.params.id, request.params.flag);
      return device ? reply.status(202).send(virtualDeviceDto(device)) : reply.status(204).send(null);
    },
  );

  app.delete(
    '/xapi/v1/virtual-devices/:id/template',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'Unlink a device from its template (its values stay)',
        params: IdParams,
        response: { 200: VirtualDeviceReply, ...errorResponses },
      },
    },
    async (request) =>
      virtualDeviceDto(await virtualDevices.unlinkTemplate(principal(request), request.params.id)),
  );

  app.get(
    '/xapi/v1/virtual-devices/:id/states',
    {
      config: { auth: 'principal', permission: READ, resource: 'virtualDevice' },
      schema: {
        tags,
        summary:
          "Current device states (`_raw`, `_parsed`, target variables) with their declared type and unit, and every key the device's driver declares",
        params: IdParams,
        response: { 200: DeviceStateListReply, ...errorResponses },
      },
    },
    async (request) => {
      const { states, declared } = await virtualDeviceData.states(principal(request), request.params.id);
      const data = states.map((r) => ({
        key: r.key,
        value: r.value,
        timestamp: new Date(r.timestamp).toISOString(),
        packetId: r.packet_id === null ? null : String(r.packet_id),
        valueType: r.valueType,
        unit: r.unit,
        warning: r.warning,
      }));
      return { data, meta: { page: 1, pageSize: data.length, total: data.length }, declared };
    },
  );

  app.get(
    '/xapi/v1/virtual-devices/:id/packets',
    {
      config: { auth: 'principal', permission: READ, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'Packet history, newest first, bounded; meta.maximumReached when older packets exist',
        params: IdParams,
        querystring: PacketListQuery,
        response: { 200: PacketListReply, ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, pageSize = 50 } = request.query;
      const result = await virtualDeviceData.packets(principal(request), request.params.id, page, pageSize);
      return {
        data: result.data.map((p) => ({
          id: p.id,
          receivedAt: p.receivedAt.toISOString(),
          source: p.source,
          status: p.status,
          error: p.error,
          warnings: p.warnings,
          meta: p.meta,
          mismatches: p.mismatches,
          payloadText: asText(p.payload),
          payloadBase64: p.payload.toString('base64'),
        })),
        meta: result.meta,
      };
    },
  );

  app.post(
    '/xapi/v1/virtual-devices/bulk-edit',
    {
      config: { auth: 'principal', permission: MANAGE },
      schema: {
        tags,
        summary: 'Apply one change to many devices, all or nothing',
        body: BulkEditBody,
        response: { 200: UpdatedReply, ...errorResponses },
      },
    },
    async (request) => ({
      updated: await virtualDeviceData.bulkEdit(principal(request), request.body.ids, request.body.set),
    }),
  );

  app.post(
    '/xapi/v1/virtual-devices/bulk-delete-tags',
    {
      config: { auth: 'principal', permission: MANAGE },
      schema: {
        tags,
        summary: 'Remove tags from devices chosen by ids and/or the list filters',
        body: BulkDeleteTagsBody,
        response: { 200: UpdatedReply, ...errorResponses },
      },
    },
    async (request) => {
      const { ids, filter, searchItems, accountId } = request.body;
      const updated = await virtualDeviceData.bulkDeleteTags(
        principal(request),
        {
          ...(ids ? { ids } : {}),
          ...(filter ? { filter: parseDeviceFilter(filter) } : {}),
          ...(searchItems ? { search: searchItems } : {}),
          ...(accountId ? { accountId } : {}),
        },
        request.body.tags,
      );
      return { updated };
    },
  );

  // text/csv is accepted here only, so no other route starts taking CSV bodies.
  await app.register(async (instance) => {
    const scoped = instance as unknown as App;
    scoped.addContentTypeParser('text/csv', streamedBodyParser(IMPORT_BODY_LIMIT));
    scoped.post(
      '/xapi/v1/virtual-devices/import',
      {
        config: { auth: 'principal', permission: MANAGE },
        // A streamed text/csv body is not a string to Ajv; it passes, JSON bodies are validated.
        validatorCompiler: acceptStreamedBody,
        schema: {
          tags,
          summary: 'Import devices from CSV (text/csv body up to 32 MiB, or JSON {csv}) as a background job',
          querystring: ImportQuery,
          body: Type.Union([
            ImportBody,
            Type.String({ description: 'The CSV file (Content-Type: text/csv)' }),
          ]),
          response: { 202: JobReply, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body as typeof request.body | StreamedBody;
        const streamed = body instanceof StreamedBody || typeof body === 'string';
        const source = streamed ? body : body.csv;
        const accountId = (streamed ? undefined : body.accountId) ?? request.query.accountId;
        const job = await virtualDeviceData.startImport(principal(request), source, accountId);
        return reply.status(202).send(jobDto(await jobs.get(principal(request), job.id)));
      },
    );
  });
}
