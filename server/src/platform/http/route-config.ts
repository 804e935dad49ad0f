/**
 * What every route declares in its `config`. The auth hook enforces `auth` and `permission`;
 * the tenant-isolation test reads `resource` to know which kind of object the `:id` parameter
 * names, so a route without it fails that test instead of slipping through.
 */
export type AuthMode =
  /** No credentials (health, docs, login itself). */
  | 'public'
  /** Bearer token, API key or console cookie; checked against `permission`. */
  | 'principal'
  /** A signed-in user (bearer or cookie), never an API key: 2FA, own profile. */
  | 'user'
  /** A user, or the setup token a mandatory-2FA login hands out: only 2FA enrolment uses this. */
  | 'enrolment'
  /**
   * A user like `user` when the credential resolves to one, else no principal instead of 401 (no
   * credential, an expired or revoked session; the latter still counts as a failed credential): the
   * console's session probe, which must not log a failed request on every visit before login.
   */
  | 'optionalUser'
  /** Legacy hub API: `x-api-key` with IotHub.manage, IotHub.read or all.manage. */
  | 'hub'
  /**
   * A public dashboard: no login and no account credential; the route itself checks the dashboard's
   * own key (dashboards/public-dashboard.routes.ts). Nothing but that dashboard's data uses it.
   */
  | 'dashboardKey';

export interface RouteConfig {
  auth: AuthMode;
  permission?: string;
  /** The kind of object the `:id` path parameter names (`account`, `user`, …). */
  resource?: string;
  /** Route-specific rate limit override. */
  rateLimit?: false | { max: number; timeWindow: number };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    permission?: string;
    resource?: string;
  }
}
