import type { AppContext } from './context.js';
import { AccountService } from './accounts/account.service.js';
import { AnnouncementService } from './accounts/announcement.service.js';
import { AuthService } from './auth/auth.service.js';
import { SessionService } from './auth/session.service.js';
import { RoleService } from './roles/role.service.js';
import { BootstrapService } from './setup/bootstrap.service.js';
import { UserService } from './users/user.service.js';

/** Every domain service, built once per server; domains call each other only through these. */
export function createServices(ctx: AppContext) {
  const accounts = new AccountService(ctx.em, ctx.secretBox, ctx.config.publicUrl);
  const announcements = new AnnouncementService(ctx.em, accounts);
  const sessions = new SessionService(ctx.em);
  const roles = new RoleService(ctx.em);
  const users = new UserService(ctx.em);
  const bootstrap = new BootstrapService(ctx.em, accounts, roles, users);
  const auth = new AuthService(ctx.em, ctx.config, users, sessions);
  return { accounts, announcements, sessions, roles, users, bootstrap, auth };
}

export type Services = ReturnType<typeof createServices>;
