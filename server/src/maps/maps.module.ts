import type { AccountService } from '../accounts/account.service.js';
import type { AuditService } from '../audit/audit.service.js';
import type { AppContext } from '../context.js';
import { BasemapService } from './basemap.service.js';
import { SitePlanService } from './site-plan.service.js';

/** Uploaded basemaps and site plans: the console map's own data, kept per account. */
export function createMaps(ctx: AppContext, deps: { accounts: AccountService; audit: AuditService }) {
  return {
    basemaps: new BasemapService(ctx.config.dataDir, ctx.config.basemapMaxBytes, deps.accounts, deps.audit),
    sitePlans: new SitePlanService(ctx.em, deps.accounts, deps.audit, ctx.config.sitePlanMaxBytes, ctx.clock),
  };
}
