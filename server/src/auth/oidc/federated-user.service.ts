import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, StoredOAuthConfig } from '../../accounts/account.entity.js';
import { federatedDefaultRole } from '../../accounts/oauth-config.js';
import type { AuditService } from '../../audit/audit.service.js';
import { errors } from '../../platform/errors.js';
import { expandPermissions } from '../../roles/permissions.js';
import { missingPermissions } from '../../roles/privileges.js';
import type { RoleService } from '../../roles/role.service.js';
import { FederatedIdentity, type User } from '../../users/user.entity.js';
import { normaliseEmail, type UserService } from '../../users/user.service.js';

/** Who the provider says the person is. Every field is the provider's word, nothing more. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  /** The provider's `amr` reports a multi-factor login (trusted only if the account says so). */
  multiFactor: boolean;
}

/** The matched user, and the identity still to be linked to it once the login completes. */
export interface FederatedMatch {
  user: User;
  pendingLink: ProviderIdentity | null;
}

/**
 * One answer for every match outside the account: which other account (if any) has the e-mail
 * or the identity is none of the browser's business (docs/adr/0030).
 */
const refused = () =>
  errors.conflict(
    'FEDERATED_LOGIN_REFUSED',
    'This provider login cannot be used for this account; ask its administrator',
  );

/**
 * Maps a provider identity to a Stellwerk user of the account whose OAuth configuration was
 * used (docs/adr/0030-federated-user-matching.md):
 * 1. a linked identity (issuer, subject) of a user of that account;
 * 2. else a user of that account with the same, provider-verified e-mail (linked when the login
 *    completes, i.e. after the user's second factor if one is owed);
 * 3. else a new password-less user of that account with the configured default role (linked).
 * Never across accounts, and never a user holding a permission the configuration's author could
 * not grant: whoever controls the provider controls every claim, including `iss`, `sub`, `email`.
 *
 * `federated_identities` is used by federated login only, so this service owns its queries.
 */
export class FederatedUserService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly users: UserService,
    private readonly roles: RoleService,
    private readonly audit: AuditService,
  ) {}

  async resolve(
    account: Account,
    oauth: StoredOAuthConfig,
    identity: ProviderIdentity,
  ): Promise<FederatedMatch> {
    const author = expandPermissions(oauth.author?.permissions ?? []);
    const linked = await this.em().findOne(
      FederatedIdentity,
      { issuer: identity.issuer, subject: identity.subject },
      { populate: ['user', 'user.account', 'user.roles'] },
    );
    if (linked) {
      if (linked.user.account.id !== account.id) throw refused();
      assertWithinAuthor(author, linked.user);
      return { user: linked.user, pendingLink: null };
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
      if (existing.account.id !== account.id) throw refused();
      if (!identity.emailVerified) {
        throw errors.conflict(
          'FEDERATED_EMAIL_UNVERIFIED',
          'A user with this e-mail exists, but the provider has not verified the address, so it is not linked',
          [{ path: '/email' }],
        );
      }
      await this.em().populate(existing, ['roles']);
      assertWithinAuthor(author, existing);
      return { user: existing, pendingLink: identity };
    }

    const roleName = federatedDefaultRole(oauth);
    const role = await this.roles.builtIn(roleName);
    if (!role) {
      throw errors.unprocessable(
        'OAUTH_DEFAULT_ROLE_NOT_FOUND',
        `oauthConfig.default_role "${roleName}" is not a built-in role`,
        [{ path: '/oauthConfig/default_role' }],
      );
    }
    // Checked when the configuration was saved; again here because built-in roles follow the code.
    if (missingPermissions(author, role.permissions).length > 0) throw notAllowed();
    const user = await this.users.create({
      accountId: account.id,
      email,
      ...(identity.name ? { name: identity.name.slice(0, 200) } : {}),
      roleIds: [role.id],
    });
    await this.link(user, identity, 'created');
    return { user, pendingLink: null };
  }

  /**
   * Links the identity to the user and audits both in one transaction. Two logins racing to link
   * the same identity meet at the unique (issuer, subject) index: the later one gets 409.
   */
  async link(
    user: User,
    identity: Pick<ProviderIdentity, 'issuer' | 'subject'>,
    via: 'created' | 'email',
  ): Promise<void> {
    const link = new FederatedIdentity();
    link.user = user;
    link.issuer = identity.issuer;
    link.subject = identity.subject;
    this.em().persist(link);
    await this.audit.record({
      accountId: user.account.id,
      actor: { kind: 'user', id: user.id, accountId: user.account.id },
      action: 'user.federatedIdentity.link',
      target: { type: 'user', id: user.id },
      details: { issuer: identity.issuer, subject: identity.subject, via },
    });
  }
}

const notAllowed = () =>
  errors.forbidden(
    'FEDERATED_LOGIN_NOT_ALLOWED',
    "This user holds permissions that the account's identity provider configuration may not grant; log in with e-mail and password",
  );

/** The configuration's author must be able to grant everything the user holds. */
function assertWithinAuthor(author: ReadonlySet<string>, user: User): void {
  const held = user.roles.getItems().flatMap((role) => role.permissions);
  if (missingPermissions(author, held).length > 0) throw notAllowed();
}
