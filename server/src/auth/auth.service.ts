import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { verifyAgainstDummy, verifySecret } from '../platform/crypto/password.js';
import { AppError, errors } from '../platform/errors.js';
import type { UserService } from '../users/user.service.js';
import { User } from '../users/user.entity.js';
import {
  clientThrottleKey,
  emailThrottleKey,
  type AttemptOutcome,
  type LoginThrottleService,
  type ThrottleKey,
} from './login-throttle.service.js';
import type { SessionKind } from './session.entity.js';
import type { ClientInfo, IssuedSession, SessionService } from './session.service.js';
import {
  invalidTwoFactorCode,
  type CodeGuard,
  type SecondFactor,
  type TwoFactorService,
} from './two-factor.service.js';

export type { ClientInfo } from './session.service.js';

export interface LoginInput {
  email: string;
  password: string;
  otp?: string;
  recoveryCode?: string;
}

export interface LoginResult extends IssuedSession {
  user: User;
  permissions: string[];
}

/** Setup tokens unlock only 2FA enrolment, and only briefly. */
export const SETUP_TOKEN_TTL_SECONDS = 15 * 60;

export const twoFactorRequired = () =>
  new AppError(
    'TWO_FACTOR_REQUIRED',
    401,
    'This user has two-factor authentication: send otp or recoveryCode',
  );

/**
 * Password login with throttling and the second factor. Unknown users, deactivated users and
 * wrong passwords take the same path (an argon2 check each, one failure per throttle key) and
 * get the same answer; the 2FA answers come only after a correct password.
 */
export class AuthService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly config: Config,
    private readonly clock: () => Date,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly throttle: LoginThrottleService,
    private readonly twoFactor: TwoFactorService,
  ) {}

  private throttleKeys(email: string, client: ClientInfo): ThrottleKey[] {
    const keys = [{ key: emailThrottleKey(email), maxFailures: this.config.loginMaxFailures }];
    if (client.ip)
      keys.push({ key: clientThrottleKey(client.ip), maxFailures: this.config.loginMaxFailuresPerClient });
    return keys;
  }

  async login(
    input: LoginInput,
    kind: Extract<SessionKind, 'bearer' | 'cookie'>,
    client: ClientInfo,
  ): Promise<LoginResult> {
    const emailKey = emailThrottleKey(input.email);
    // The place is taken before the password is checked: concurrent guesses cannot all slip in.
    const attempt = await this.throttle.reserve(this.throttleKeys(input.email, client));
    // Anything that ends the attempt early, an error included, counts as a failure.
    let outcome: AttemptOutcome = 'failed';
    try {
      const user = await this.users.findByEmail(input.email);
      const passwordOk =
        user?.passwordHash && user.active
          ? await verifySecret(user.passwordHash, input.password)
          : await verifyAgainstDummy(input.password);
      if (!user || !passwordOk) throw errors.invalidCredentials();

      if (user.totpEnabled) {
        if (!input.otp && !input.recoveryCode) {
          outcome = 'undecided';
          throw twoFactorRequired();
        }
        // Wrong codes count like wrong passwords: six digits must not be guessable by brute force.
        if (!(await this.twoFactor.verifyFactor(user, input))) throw invalidTwoFactorCode(401);
      } else if (user.account.mandatoryTwoFactor) {
        outcome = 'undecided';
        const setup = await this.sessions.issue(user, 'setup', SETUP_TOKEN_TTL_SECONDS, client);
        throw errors.forbidden(
          'TWO_FACTOR_SETUP_REQUIRED',
          'This account requires two-factor authentication: enrol with the setupToken as bearer token, then log in again',
          [{ setupToken: setup.token, expiresAt: setup.session.expiresAt.toISOString() }],
        );
      }

      outcome = 'passed';
      const ttl = kind === 'bearer' ? this.config.tokenTtlSeconds : this.config.sessionTtlSeconds;
      const issued = await this.sessions.issue(user, kind, ttl, client);
      user.lastLoginAt = this.clock();
      await this.em().flush();
      return { ...issued, user, permissions: await this.permissionsOf(user) };
    } finally {
      // A successful login resets the e-mail counter, never the address's (docs/adr/0021).
      await attempt.settle(outcome, [emailKey]);
    }
  }

  /**
   * The second factor of a login whose first factor was checked elsewhere (federated login),
   * throttled like a password: wrong codes count against the user's e-mail and the client.
   */
  async checkSecondFactor(user: User, factor: SecondFactor, client: ClientInfo): Promise<void> {
    // The place is taken before the code is checked, as for a password (concurrent guesses).
    const attempt = await this.throttle.reserve(this.throttleKeys(user.email, client));
    let outcome: AttemptOutcome = 'failed';
    try {
      if (!(await this.twoFactor.verifyFactor(user, factor))) throw invalidTwoFactorCode(401);
      outcome = 'passed';
    } finally {
      await attempt.settle(outcome, [emailThrottleKey(user.email)]);
    }
  }

  /**
   * The console's login: whatever session the browser presented is revoked first, so a planted
   * or stale session id never survives a login (session fixation); the new id is fresh.
   */
  async consoleLogin(
    input: LoginInput,
    presentedToken: string | undefined,
    client: ClientInfo,
  ): Promise<LoginResult> {
    if (presentedToken) await this.sessions.revokeToken(presentedToken);
    return this.login(input, 'cookie', client);
  }

  /** Ends the session behind a token, e.g. at logout; unknown tokens are ignored. */
  logout(token: string): Promise<void> {
    return this.sessions.revokeToken(token);
  }

  logoutSession(sessionId: string): Promise<void> {
    return this.sessions.revoke(sessionId);
  }

  /**
   * Activates the caller's 2FA. Setup tokens are spent by it; a console session is replaced by a
   * new one (new id after a privilege change), which the route hands out as the new cookie.
   */
  async activateTwoFactor(
    userId: string,
    sessionId: string | null,
    otp: string,
    client: ClientInfo,
  ): Promise<{ recoveryCodes: string[]; newCookieSession?: IssuedSession }> {
    const current = sessionId ? await this.sessions.findLive(sessionId) : null;
    const recoveryCodes = await this.twoFactor.activate(userId, otp, this.codeGuard(client));
    await this.sessions.revokeAllOfUser(userId, ['setup']);
    if (current?.kind !== 'cookie') return { recoveryCodes };
    const user = await this.em().findOneOrFail(User, { id: userId });
    const newCookieSession = await this.sessions.issue(user, 'cookie', this.config.sessionTtlSeconds, client);
    await this.sessions.revoke(current.id);
    return { recoveryCodes, newCookieSession };
  }

  /** Turns the caller's 2FA off with a current code or an unused recovery code (throttled). */
  deactivateTwoFactor(userId: string, factor: SecondFactor, client: ClientInfo): Promise<void> {
    return this.twoFactor.deactivate(userId, factor, this.codeGuard(client));
  }

  /**
   * Every code check outside the login is throttled like a login, against the same budgets: the
   * account's (its e-mail key) and the client address's. A session alone must not buy guesses.
   */
  private codeGuard(client: ClientInfo): CodeGuard {
    return (user, check) => this.throttle.guard(this.throttleKeys(user.email, client), check);
  }

  /** The signed-in user with account and roles, for `GET /api/v1/user`. */
  async currentUser(userId: string): Promise<{ user: User; permissions: string[] }> {
    const user = await this.em().findOneOrFail(User, { id: userId }, { populate: ['account', 'roles'] });
    return { user, permissions: await this.permissionsOf(user) };
  }

  /** Canonical names of the permissions the user's roles hold. */
  async permissionsOf(user: User): Promise<string[]> {
    if (!user.roles.isInitialized()) await user.roles.init();
    return [...new Set(user.roles.getItems().flatMap((role) => role.permissions))].sort();
  }
}
