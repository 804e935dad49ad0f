import type { App, AppContext } from './context.js';
import { createServices, type Services } from './services.js';
import { accountRoutes } from './accounts/account.routes.js';
import { setupRoutes } from './setup/setup.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { oidcRoutes } from './auth/oidc/oidc.routes.js';
import { healthRoutes } from './health/health.routes.js';
import { userRoutes } from './users/user.routes.js';
import { invitationRoutes } from './users/invitation.routes.js';
import { roleRoutes } from './roles/role.routes.js';
import { apiKeyRoutes } from './api-keys/api-key.routes.js';
import { permissionScopeRoutes } from './permission-scopes/permission-scope.routes.js';
import { hubRoutes } from './hub/hub.routes.js';
import { deviceDriverRoutes } from './drivers/device-driver.routes.js';
import { brokerRoutes } from './broker/broker.routes.js';
import { consoleRoutes } from './console/console.routes.js';
import { liveRoutes } from './live/live.routes.js';
import { connectorRoutes } from './connectors/connector.routes.js';
import { webhookRoutes } from './connectors/webhook.routes.js';
import { jobRoutes } from './jobs/job.routes.js';
import { deviceTemplateRoutes } from './templates/device-template.routes.js';
import { virtualDeviceRoutes } from './devices/virtual-device.routes.js';
import { activeDevicesRoutes } from './devices/active-devices.routes.js';
import { dashboardRoutes } from './dashboards/dashboard.routes.js';
import { digitalTwinRoutes } from './twins/digital-twin.routes.js';
import { dataStateRoutes } from './states/data-state.routes.js';
import { timeseriesQueryRoutes } from './timeseries/query/query.routes.js';

/** Every domain's routes, registered in one place. */
export async function registerDomains(app: App, ctx: AppContext): Promise<Services> {
  const services = createServices(ctx);
  await accountRoutes(app, ctx, services);
  await setupRoutes(app, ctx, services);
  await authRoutes(app, ctx, services);
  await oidcRoutes(app, ctx, services);
  await healthRoutes(app, ctx, services);
  await userRoutes(app, ctx, services);
  await invitationRoutes(app, ctx, services);
  await roleRoutes(app, ctx, services);
  await apiKeyRoutes(app, ctx, services);
  await permissionScopeRoutes(app, ctx, services);
  await hubRoutes(app, ctx, services);
  await deviceDriverRoutes(app, ctx, services);
  await liveRoutes(app, ctx, services);
  await connectorRoutes(app, ctx, services);
  await webhookRoutes(app, ctx, services);
  await jobRoutes(app, ctx, services);
  await deviceTemplateRoutes(app, ctx, services);
  await virtualDeviceRoutes(app, ctx, services);
  await activeDevicesRoutes(app, ctx, services);
  await dashboardRoutes(app, ctx, services);
  await digitalTwinRoutes(app, ctx, services);
  await dataStateRoutes(app, ctx, services);
  await timeseriesQueryRoutes(app, ctx, services);
  await consoleRoutes(app, ctx);
  // Last: the live WebSocket registers @fastify/websocket with its subprotocol choice first.
  await brokerRoutes(app, ctx, services);
  return services;
}
