import type { App, AppContext } from './context.js';
import { createServices, type Services } from './services.js';
import { accountRoutes } from './accounts/account.routes.js';
import { setupRoutes } from './setup/setup.routes.js';
import { authRoutes } from './auth/auth.routes.js';

/** Every domain's routes, registered in one place. */
export async function registerDomains(app: App, ctx: AppContext): Promise<Services> {
  const services = createServices(ctx);
  await accountRoutes(app, ctx, services);
  await setupRoutes(app, ctx, services);
  await authRoutes(app, ctx, services);
  return services;
}
