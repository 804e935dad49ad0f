import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses } from '../platform/http/schemas.js';
import type { User } from '../users/user.entity.js';
import { LoginBody, LoginReply } from './auth.schemas.js';

const tags = ['auth'];

export function userSummary(user: User, permissions: string[]) {
  return {
    id: user.id,
    accountId: user.account.id,
    email: user.email,
    name: user.name,
    locale: user.locale,
    twoFactorEnabled: user.totpEnabled,
    permissions,
  };
}

export async function authRoutes(app: App, _ctx: AppContext, { auth }: Services): Promise<void> {
  app.post(
    '/xapi/v1/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Log in with e-mail and password (and a 2FA code when enabled); returns a bearer token',
        security: [],
        body: LoginBody,
        response: { 200: LoginReply, ...errorResponses },
      },
    },
    async (request) => {
      const result = await auth.login(request.body, 'bearer', { ip: request.ip, userAgent: request.headers['user-agent'] });
      await result.user.roles.init();
      const permissions = [...new Set(result.user.roles.getItems().flatMap((r) => r.permissions))];
      return { token: result.token, expiresAt: result.session.expiresAt.toISOString(), user: userSummary(result.user, permissions) };
    },
  );
}
