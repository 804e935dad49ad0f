import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { virtualDeviceDto } from '../devices/virtual-device.routes.js';
import { VirtualDeviceReply } from '../devices/virtual-device.schemas.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { DeviceTemplate } from './device-template.entity.js';
import {
  CopyBody,
  DeviceTemplateCopyReply,
  DeviceTemplateCreate,
  DeviceTemplateListQuery,
  DeviceTemplateReply,
  DeviceTemplateUpdate,
  LinkBody,
} from './device-template.schemas.js';
import { DEVICE_TEMPLATE_SORTABLE } from './device-template.service.js';

const tags = ['device-templates'];

export const deviceTemplateDto = (t: DeviceTemplate) => ({
  id: t.id,
  accountId: t.account.id,
  title: t.title,
  description: t.description,
  deviceDriverId: t.driver?.id ?? null,
  connectorType: t.connectorType,
  tags: t.tags,
  groups: t.groups,
  keyValueData: t.keyValueData,
  healthConfig: (t.healthConfig as unknown as Record<string, unknown> | null) ?? null,
  createdAt: t.createdAt.toISOString(),
  updatedAt: t.updatedAt.toISOString(),
});

export async function deviceTemplateRoutes(
  app: App,
  _ctx: AppContext,
  { deviceTemplates, virtualDevices }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/device-templates',
    {
      config: { auth: 'principal', permission: 'deviceTemplate.read' },
      schema: {
        tags,
        summary: 'Device templates of an account',
        querystring: DeviceTemplateListQuery,
        response: { 200: listReply(DeviceTemplateReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, DEVICE_TEMPLATE_SORTABLE, 'title');
      const result = await deviceTemplates.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(deviceTemplateDto), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/device-templates/:id',
    {
      config: { auth: 'principal', permission: 'deviceTemplate.read', resource: 'deviceTemplate' },
      schema: {
        tags,
        summary: 'One device template',
        params: IdParams,
        response: { 200: DeviceTemplateReply, ...errorResponses },
      },
    },
    async (request) => deviceTemplateDto(await deviceTemplates.get(principal(request), request.params.id)),
  );

  app.post(
    '/xapi/v1/device-templates',
    {
      config: { auth: 'principal', permission: 'deviceTemplate.manage' },
      schema: {
        tags,
        summary: 'Create a device template',
        body: DeviceTemplateCreate,
        response: { 201: DeviceTemplateReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(deviceTemplateDto(await deviceTemplates.create(principal(request), request.body))),
  );

  app.put(
    '/xapi/v1/device-templates/:id',
    {
      config: { auth: 'principal', permission: 'deviceTemplate.manage', resource: 'deviceTemplate' },
      schema: {
        tags,
        summary: 'Change a template; a background job synchronises the linked devices',
        params: IdParams,
        body: DeviceTemplateUpdate,
        response: { 200: DeviceTemplateReply, ...errorResponses },
      },
    },
    async (request) =>
      deviceTemplateDto(await deviceTemplates.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/device-templates/:id',
    {
      config: { auth: 'principal', permission: 'deviceTemplate.manage', resource: 'deviceTemplate' },
      schema: {
        tags,
        summary: 'Delete a template (409 DELETE_BLOCKED while one of its jobs is queued or running)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await deviceTemplates.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/xapi/v1/device-templates/:id/copy',
    {
      config: { auth: 'principal', permission: 'deviceTemplate.manage', resource: 'deviceTemplate' },
      schema: {
        tags,
        summary: 'Copy a template within its account or into another reachable account',
        params: IdParams,
        body: CopyBody,
        response: { 201: DeviceTemplateCopyReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { template, driverDropped } = await deviceTemplates.copy(
        principal(request),
        request.params.id,
        request.body.targetAccountId,
      );
      return reply.status(201).send({ ...deviceTemplateDto(template), driverDropped });
    },
  );

  app.post(
    '/xapi/v1/device-templates/:id/devices',
    {
      config: { auth: 'principal', permission: 'virtualDevice.manage', resource: 'deviceTemplate' },
      schema: {
        tags,
        summary: 'Link devices to the template (each needs a driver: 422 DEVICE_WITHOUT_DRIVER)',
        params: IdParams,
        body: LinkBody,
        response: { 200: listReply(VirtualDeviceReply), ...errorResponses },
      },
    },
    async (request) => {
      const devices = await virtualDevices.linkTemplate(
        principal(request),
        request.params.id,
        request.body.deviceIds,
      );
      return {
        data: devices.map(virtualDeviceDto),
        meta: { page: 1, pageSize: devices.length, total: devices.length },
      };
    },
  );
}
