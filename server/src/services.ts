import { PacketStore } from './ingest/packet-store.js';
import type { AppContext } from './context.js';
import { AccountService } from './accounts/account.service.js';
import { AnnouncementService } from './accounts/announcement.service.js';
import { AuthService } from './auth/auth.service.js';
import { FederatedUserService } from './auth/oidc/federated-user.service.js';
import { LoginStateService } from './auth/oidc/login-state.service.js';
import { OidcService } from './auth/oidc/oidc.service.js';
import { AuthHousekeeping } from './auth/auth-housekeeping.js';
import { LoginThrottleService } from './auth/login-throttle.service.js';
import { SessionService } from './auth/session.service.js';
import { TwoFactorService } from './auth/two-factor.service.js';
import { HealthService } from './health/health.service.js';
import { HeartbeatService } from './health/heartbeat.service.js';
import { RoleService } from './roles/role.service.js';
import { BootstrapService } from './setup/bootstrap.service.js';
import { UserService } from './users/user.service.js';
import { InvitationService } from './users/invitation.service.js';
import { ApiKeyService } from './api-keys/api-key.service.js';
import { PermissionScopeService } from './permission-scopes/permission-scope.service.js';
import { createMailer } from './platform/mail/mailer.js';

/** Every domain service, built once per server; domains call each other only through these. */
export function createServices(ctx: AppContext) {
  const accounts = new AccountService(ctx.em, ctx.secretBox, ctx.config.publicUrl);
  const announcements = new AnnouncementService(ctx.em, accounts);
  const sessions = new SessionService(ctx.em, ctx.clock);
  const loginThrottle = new LoginThrottleService(ctx.em, ctx.clock, { lockMs: ctx.config.loginLockMs });
  const twoFactor = new TwoFactorService(ctx.em, ctx.secretBox, ctx.clock);
  const mailer = createMailer({ smtpUrl: ctx.config.smtpUrl, from: ctx.config.mailFrom, log: ctx.log });
  const roles = new RoleService(ctx.em, accounts);
  const permissionScopes = new PermissionScopeService(ctx.em, accounts);
  const apiKeys = new ApiKeyService(ctx.em, accounts);
  const invitations = new InvitationService({
    em: ctx.em,
    mailer,
    publicUrl: ctx.config.publicUrl,
    log: ctx.log,
    clock: ctx.clock,
  });
  const users = new UserService(ctx.em, { accounts, roles, permissionScopes, invitations });
  const bootstrap = new BootstrapService(ctx.em, accounts, roles, users, ctx.secretBox);
  const auth = new AuthService(ctx.em, ctx.config, ctx.clock, users, sessions, loginThrottle, twoFactor);
  const health = HealthService.fromContext(ctx);
  const heartbeat = HeartbeatService.fromContext(ctx);
  ctx.lifecycle.push(heartbeat);
  ctx.lifecycle.push(new AuthHousekeeping(ctx.orm, ctx.log, sessions, loginThrottle));
  const loginStates = new LoginStateService(ctx.em, ctx.clock);
  const federatedUsers = new FederatedUserService(ctx.em, users, roles);
  const oidc = new OidcService(
    ctx.em,
    ctx.clock,
    ctx.config,
    accounts,
    sessions,
    loginStates,
    federatedUsers,
  );
  const packets = new PacketStore(
    String(ctx.orm.config.get('clientUrl')),
    ctx.config.ingestMaxPending,
    ctx.metrics,
  );
  ctx.lifecycle.push(packets);
  return {
    packets,
    accounts,
    announcements,
    sessions,
    roles,
    users,
    mailer,
    permissionScopes,
    apiKeys,
    invitations,
    bootstrap,
    auth,
    loginThrottle,
    twoFactor,
    health,
    heartbeat,
    oidc,
  };
}

export type Services = ReturnType<typeof createServices>;
