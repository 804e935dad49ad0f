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
  return services;
}
