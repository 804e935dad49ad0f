import type { App, AppContext } from '../../context.js';
import type { Services } from '../../services.js';
import type { Principal } from '../../auth/principal.js';
import { errorResponses, IdParams } from '../../platform/http/schemas.js';
import { DeviceHealthReply, ManualHealthBody } from './device-health.schemas.js';

const tags = ['virtual-devices'];
const READ = 'VirtualDevice.read';
const MANAGE = 'virtualDevice.manage';

/** A device's health, its own (manual) health rules and an on-demand evaluation (docs/device-health.md). */
export async function deviceHealthRoutes(
  app: App,
  _ctx: AppContext,
  { deviceHealth }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.get(
    '/xapi/v1/virtual-devices/:id/health',
    {
      config: { auth: 'principal', permission: READ, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: "A device's health, the rules in force, default or manual, and when it is evaluated",
        params: IdParams,
        response: { 200: DeviceHealthReply, ...errorResponses },
      },
    },
    async (request) => deviceHealth.get(principal(request), request.params.id),
  );

  app.put(
    '/xapi/v1/virtual-devices/:id/health',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'Give the device its own health rules and schedule (manual; they keep their schedule)',
        params: IdParams,
        body: ManualHealthBody,
        response: { 200: DeviceHealthReply, ...errorResponses },
      },
    },
    async (request) => deviceHealth.setManual(principal(request), request.params.id, request.body),
  );

  app.delete(
    '/xapi/v1/virtual-devices/:id/health',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: "Back to the driver's default health rules, evaluated in the device's daily slot",
        params: IdParams,
        response: { 200: DeviceHealthReply, ...errorResponses },
      },
    },
    async (request) => deviceHealth.reset(principal(request), request.params.id),
  );

  app.post(
    '/xapi/v1/virtual-devices/:id/health/evaluate',
    {
      config: { auth: 'principal', permission: MANAGE, resource: 'virtualDevice' },
      schema: {
        tags,
        summary: 'Evaluate the health now (the schedule stays)',
        params: IdParams,
        response: { 200: DeviceHealthReply, ...errorResponses },
      },
    },
    async (request) => deviceHealth.evaluateNow(principal(request), request.params.id),
  );
}
