import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import type { DeviceDriver } from './device-driver.entity.js';
import {
  DriverCreate,
  DriverListQuery,
  DriverReply,
  DriverTestBody,
  DriverUpdate,
  EncodeDownlinkBody,
  EncodeDownlinkReply,
  ParserTestBody,
  ParserTestReply,
} from './device-driver.schemas.js';
import { DRIVER_SORTABLE } from './device-driver.service.js';
import { shownAccountId } from '../accounts/account.service.js';
import { MAX_SCRIPT_LENGTH } from './parsers/javascript.parser.js';

const tags = ['device-drivers'];

/**
 * Bodies that carry a parser script (up to MAX_SCRIPT_LENGTH characters): JSON escaping of quotes,
 * backslashes and line breaks at most doubles ASCII, and UTF-8 takes up to 3 bytes a character.
 */
export const DRIVER_BODY_LIMIT = 4 * MAX_SCRIPT_LENGTH;

/** `above`: accounts above the caller's, whose shared drivers it uses without learning their ids. */
export const driverDto = (driver: DeviceDriver, above: ReadonlySet<string> = new Set()) => ({
  id: driver.id,
  accountId: shownAccountId(driver.account.id, above),
  title: driver.title,
  description: driver.description,
  shared: driver.shared,
  parser: driver.parser,
  targetVariables: driver.targetVariables,
  healthConfig: driver.healthConfig,
  createdAt: driver.createdAt.toISOString(),
  updatedAt: driver.updatedAt.toISOString(),
});

export async function deviceDriverRoutes(
  app: App,
  _ctx: AppContext,
  { drivers, accounts }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/device-drivers',
    {
      config: { auth: 'principal', permission: 'deviceDriver.read' },
      schema: {
        tags,
        summary: 'Drivers usable in an account: its own and the shared drivers of its parent accounts',
        querystring: DriverListQuery,
        response: { 200: listReply(DriverReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, DRIVER_SORTABLE, 'title');
      const result = await drivers.list(principal(request), params, request.query.accountId);
      const above = await accounts.idsAbove(principal(request));
      return { data: result.data.map((d) => driverDto(d, above)), meta: result.meta };
    },
  );

  app.get(
    '/xapi/v1/device-drivers/:id',
    {
      config: { auth: 'principal', permission: 'deviceDriver.read', resource: 'deviceDriver' },
      schema: {
        tags,
        summary: 'One driver',
        params: IdParams,
        response: { 200: DriverReply, ...errorResponses },
      },
    },
    async (request) =>
      driverDto(
        await drivers.get(principal(request), request.params.id),
        await accounts.idsAbove(principal(request)),
      ),
  );

  app.post(
    '/xapi/v1/device-drivers',
    {
      bodyLimit: DRIVER_BODY_LIMIT,
      config: { auth: 'principal', permission: 'deviceDriver.manage' },
      schema: {
        tags,
        summary: 'Create a driver; 422 INVALID_PARSER_CONFIG or INVALID_HEALTH_CONFIG name each problem',
        body: DriverCreate,
        response: { 201: DriverReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(driverDto(await drivers.create(principal(request), request.body))),
  );

  app.put(
    '/xapi/v1/device-drivers/:id',
    {
      bodyLimit: DRIVER_BODY_LIMIT,
      config: { auth: 'principal', permission: 'deviceDriver.manage', resource: 'deviceDriver' },
      schema: {
        tags,
        summary: 'Change a driver; shared drivers of parent accounts answer 403 INHERITED_DEVICE_DRIVER',
        params: IdParams,
        body: DriverUpdate,
        response: { 200: DriverReply, ...errorResponses },
      },
    },
    async (request) => driverDto(await drivers.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    '/xapi/v1/device-drivers/:id',
    {
      config: { auth: 'principal', permission: 'deviceDriver.manage', resource: 'deviceDriver' },
      schema: {
        tags,
        summary: 'Delete a driver no template or device uses (409 DELETE_BLOCKED otherwise)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await drivers.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/xapi/v1/device-drivers/:id/test',
    {
      config: { auth: 'principal', permission: 'deviceDriver.read', resource: 'deviceDriver' },
      schema: {
        tags,
        summary: 'Parse a sample packet with a stored driver; 422 PARSE_ERROR or PARSER_* with the message',
        params: IdParams,
        body: DriverTestBody,
        response: { 200: ParserTestReply, ...errorResponses },
      },
    },
    async (request) =>
      drivers.test(principal(request), request.params.id, request.body.payload, request.body.meta),
  );

  app.post(
    '/xapi/v1/device-drivers/:id/encode-downlink',
    {
      config: { auth: 'principal', permission: 'deviceDriver.read', resource: 'deviceDriver' },
      schema: {
        tags,
        summary:
          "Encode downlink data with a stored driver's TS013 codec (encodeDownlink); 422 DOWNLINK_ENCODE_FAILED with the codec's errors",
        params: IdParams,
        body: EncodeDownlinkBody,
        response: { 200: EncodeDownlinkReply, ...errorResponses },
      },
    },
    async (request) =>
      drivers.encodeDownlink(principal(request), request.params.id, request.body.data, request.body.meta),
  );

  app.post(
    '/xapi/v1/device-drivers/test',
    {
      bodyLimit: DRIVER_BODY_LIMIT,
      config: { auth: 'principal', permission: 'deviceDriver.manage' },
      schema: {
        tags,
        summary: 'Parse a sample packet with an unsaved parser configuration',
        body: ParserTestBody,
        response: { 200: ParserTestReply, ...errorResponses },
      },
    },
    async (request) =>
      drivers.testConfig({
        ...request.body,
        parser: request.body.parser,
        payload: request.body.payload,
      }),
  );
}
