import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../accounts/account.entity.js';
import { errors } from '../../platform/errors.js';
import type { RoleService } from '../../roles/role.service.js';
import { FederatedIdentity, type User } from '../../users/user.entity.js';
import { normaliseEmail, type UserService } from '../../users/user.service.js';

export const DEFAULT_FEDERATED_ROLE = 'AccountReader';

/** Who the provider says the person is. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
}

/**
 * Maps a provider identity to a Stellwerk user of the account whose OAuth configuration was
 * used (docs/adr/0030-federated-user-matching.md):
 * 1. a linked identity (issuer, subject) of a user of that account;
 * 2. else a user of that account with the same, provider-verified e-mail (then linked);
 * 3. else a new password-less user of that account with the configured default role (linked).
 * Never across accounts: an account administrator controls the provider and so every claim it
 * makes, including `iss`, `sub` and `email`; trusting them for another account's users would
 * let that administrator take those users over.
 *
 * `federated_identities` is used by federated login only, so this service owns its queries.
 */
export class FederatedUserService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly users: UserService,
    private readonly roles: RoleService,
  ) {}

  async resolve(
    account: Account,
    identity: ProviderIdentity,
    defaultRole: string | undefined,
  ): Promise<User> {
    const linked = await this.em().findOne(
      FederatedIdentity,
      { issuer: identity.issuer, subject: identity.subject },
      { populate: ['user', 'user.account'] },
    );
    if (linked) {
      if (linked.user.account.id !== account.id) {
        throw errors.conflict(
          'FEDERATED_IDENTITY_CONFLICT',
          'This provider identity is linked to a user of another account',
          [{ issuer: identity.issuer }],
        );
      }
      return linked.user;
    }

    if (!identity.email) {
      throw errors.unprocessable(
        'FEDERATED_EMAIL_MISSING',
        'The provider returned no e-mail address; ask for the email scope',
        [{ issuer: identity.issuer }],
      );
    }
    const email = normaliseEmail(identity.email);
    const existing = await this.users.findByEmail(email);
    if (existing) {
      if (existing.account.id !== account.id) {
        throw errors.conflict(
          'FEDERATED_EMAIL_CONFLICT',
          'A user with this e-mail belongs to another account; federated login never links across accounts',
          [{ path: '/email' }],
        );
      }
      if (!identity.emailVerified) {
        throw errors.conflict(
          'FEDERATED_EMAIL_UNVERIFIED',
          'A user with this e-mail exists, but the provider has not verified the address, so it is not linked',
          [{ path: '/email' }],
        );
      }
      await this.link(existing, identity);
      return existing;
    }

    const roleName = defaultRole?.trim() || DEFAULT_FEDERATED_ROLE;
    const role = await this.roles.builtIn(roleName);
    if (!role) {
      throw errors.unprocessable(
        'OAUTH_DEFAULT_ROLE_NOT_FOUND',
        `oauthConfig.default_role "${roleName}" is not a built-in role`,
        [{ path: '/oauthConfig/default_role' }],
      );
    }
    const user = await this.users.create({
      accountId: account.id,
      email,
      ...(identity.name ? { name: identity.name.slice(0, 200) } : {}),
      roleIds: [role.id],
    });
    await this.link(user, identity);
    return user;
  }

  private async link(user: User, identity: ProviderIdentity): Promise<void> {
    const link = new FederatedIdentity();
    link.user = user;
    link.issuer = identity.issuer;
    link.subject = identity.subject;
    await this.em().persistAndFlush(link);
  }
}
