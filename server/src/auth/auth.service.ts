import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { verifyAgainstDummy, verifySecret } from '../platform/crypto/password.js';
import { errors } from '../platform/errors.js';
import type { UserService } from '../users/user.service.js';
import type { User } from '../users/user.entity.js';
import type { SessionKind } from './session.entity.js';
import type { IssuedSession, SessionService } from './session.service.js';

export interface LoginInput {
  email: string;
  password: string;
  otp?: string;
  recoveryCode?: string;
}

export interface ClientInfo {
  ip?: string;
  userAgent?: string;
}

export interface LoginResult extends IssuedSession {
  user: User;
}

/** Password login. Unknown users and wrong passwords take the same time and give the same answer. */
export class AuthService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly config: Config,
    private readonly users: UserService,
    private readonly sessions: SessionService,
  ) {}

  async login(input: LoginInput, kind: Extract<SessionKind, 'bearer' | 'cookie'>, client: ClientInfo): Promise<LoginResult> {
    const user = await this.users.findByEmail(input.email);
    const passwordOk =
      user?.passwordHash && user.active
        ? await verifySecret(user.passwordHash, input.password)
        : await verifyAgainstDummy(input.password);
    if (!user || !passwordOk) throw errors.invalidCredentials();

    const ttl = kind === 'bearer' ? this.config.tokenTtlSeconds : this.config.sessionTtlSeconds;
    const issued = await this.sessions.issue(user, kind, ttl, client);
    user.lastLoginAt = new Date();
    await this.em().flush();
    return { ...issued, user };
  }
}
