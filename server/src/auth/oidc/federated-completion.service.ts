import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import { randomToken, sha256 } from '../../platform/crypto/tokens.js';
import { AppError, errors } from '../../platform/errors.js';
import type { User } from '../../users/user.entity.js';
import type { AuthService } from '../auth.service.js';
import type { ClientInfo, IssuedSession, SessionService } from '../session.service.js';
import type { SecondFactor } from '../two-factor.service.js';
import type { FederatedUserService, ProviderIdentity } from './federated-user.service.js';
import { OAuthSecondFactorState } from './second-factor-state.entity.js';

/** After the provider, the person has this long to enter their Stellwerk code. */
export const SECOND_FACTOR_TTL_SECONDS = 300;

export type PendingLink = Pick<ProviderIdentity, 'issuer' | 'subject'>;

export interface CompletedLogin extends IssuedSession {
  user: User;
  returnTo: string;
}

export interface FinishInput {
  /** The session cookie the browser still holds; revoked, so every login gets a new session id. */
  previousSessionToken: string | undefined;
  client: ClientInfo;
}

const expired = () =>
  new AppError(
    'OAUTH_STATE_INVALID',
    401,
    'No sign-in through the provider is waiting for a code in this browser (or it expired); start again',
  );

/**
 * The end of a federated login: either at once, or, when the user owes Stellwerk's second factor
 * (docs/adr/0031), after the code, which is throttled exactly like a password login's. The login
 * waits in `oauth_second_factor_states` (shared by all nodes) for 5 minutes; an identity matched
 * by e-mail is linked only when the login completes.
 */
export class FederatedCompletion {
  constructor(
    private readonly em: () => EntityManager,
    private readonly clock: () => Date,
    private readonly config: Config,
    private readonly sessions: SessionService,
    private readonly auth: AuthService,
    private readonly federatedUsers: FederatedUserService,
  ) {}

  /** Links what is pending, revokes the browser's old session and issues a new cookie session. */
  async finish(
    user: User,
    pendingLink: PendingLink | null,
    returnTo: string,
    input: FinishInput,
  ): Promise<CompletedLogin> {
    if (pendingLink) await this.federatedUsers.link(user, pendingLink, 'email');
    if (input.previousSessionToken) await this.sessions.revokeToken(input.previousSessionToken);
    const issued = await this.sessions.issue(user, 'cookie', this.config.sessionTtlSeconds, input.client);
    user.lastLoginAt = this.clock();
    await this.em().flush();
    return { ...issued, user, returnTo };
  }

  /** Parks the login until the code arrives; returns the token for the browser's cookie. */
  async awaitSecondFactor(user: User, pendingLink: PendingLink | null, returnTo: string): Promise<string> {
    const now = this.clock();
    // Abandoned logins are dropped here: the table stays as small as the logins waiting for a code.
    await this.em().nativeDelete(OAuthSecondFactorState, { expiresAt: { $lt: now } });
    const token = randomToken();
    const row = new OAuthSecondFactorState();
    row.tokenHash = sha256(token);
    row.user = user;
    row.linkIssuer = pendingLink?.issuer ?? null;
    row.linkSubject = pendingLink?.subject ?? null;
    row.returnTo = returnTo;
    row.createdAt = now;
    row.expiresAt = new Date(now.getTime() + SECOND_FACTOR_TTL_SECONDS * 1000);
    await this.em().persistAndFlush(row);
    return token;
  }

  /** Checks the code (or a recovery code) and finishes the parked login; the token works once. */
  async completeSecondFactor(
    token: string | undefined,
    factor: SecondFactor,
    input: FinishInput,
  ): Promise<CompletedLogin> {
    if (!token) throw expired();
    const tokenHash = sha256(token);
    const row = await this.em().findOne(
      OAuthSecondFactorState,
      { tokenHash, expiresAt: { $gt: this.clock() } },
      { populate: ['user', 'user.account'] },
    );
    if (!row) throw expired();
    const user = row.user;
    if (!user.active) throw errors.forbidden('USER_DEACTIVATED', 'This user is deactivated');
    await this.auth.checkSecondFactor(user, factor, input.client);
    // Conditional delete: of two requests with the same token and valid codes only one finishes.
    const spent = await this.em().nativeDelete(OAuthSecondFactorState, { tokenHash });
    if (spent !== 1) throw expired();
    const pendingLink =
      row.linkIssuer && row.linkSubject ? { issuer: row.linkIssuer, subject: row.linkSubject } : null;
    return this.finish(user, pendingLink, row.returnTo, input);
  }
}
