import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { hashSecret } from '../platform/crypto/password.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import type { PermissionScopeService } from '../permission-scopes/permission-scope.service.js';
import { assertMayGrant, assertOutranks, scopeRestricted, scopesWithin } from '../roles/privileges.js';
import { Role } from '../roles/role.entity.js';
import type { RoleService } from '../roles/role.service.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import type { InvitationService, IssuedInvitation } from './invitation.service.js';
import { User } from './user.entity.js';

export const USER_SORTABLE = ['name', 'email', 'createdAt', 'updatedAt', 'lastLoginAt'] as const;

export interface NewUser {
  accountId: string;
  email: string;
  name?: string;
  /** Omitted for federated and invited users, who have no password yet. */
  password?: string;
  roleIds?: string[];
  permissionScopeIds?: string[];
  locale?: string;
  active?: boolean;
}

/** What an administrator sends to create a user through the API. */
export interface ManagedNewUser extends Omit<NewUser, 'accountId'> {
  accountId?: string;
  suppressInvitation?: boolean;
}

export interface UserChanges {
  name?: string;
  locale?: string;
  active?: boolean;
  permissionScopeIds?: string[];
}

/** A user with what its reply shows beyond the entity. */
export interface UserView {
  user: User;
  invitationPending: boolean;
}

export interface CreatedUser extends UserView {
  invitation: IssuedInvitation | null;
}

export interface UserServiceDeps {
  accounts: AccountService;
  roles: RoleService;
  permissionScopes: PermissionScopeService;
  invitations: InvitationService;
  audit: AuditService;
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/**
 * E-mails are unique instance-wide, so a taken address cannot be hidden, but whose it is can: the
 * answer is the same whether the user is in the caller's accounts or in another tenant.
 */
const emailTaken = () =>
  errors.conflict(
    'EMAIL_TAKEN',
    'This e-mail address cannot be used for a new user; if the person has a user already, find it in the user list',
    [{ path: '/email' }],
  );

export const MIN_PASSWORD_LENGTH = 12;

export function assertPasswordPolicy(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
    throw errors.validation(`Passwords need ${MIN_PASSWORD_LENGTH} to 1024 characters`, [
      { path: '/password' },
    ]);
  }
}

/** The permissions and scopes a user holds, for the no-escalation checks. */
export const holdings = (user: User) => ({
  permissions: user.roles.getItems().flatMap((r) => r.permissions),
  permissionScopeIds:
    user.permissionScopes.length > 0 ? user.permissionScopes.getItems().map((s) => s.id) : null,
});

const POPULATE = ['account', 'roles', 'permissionScopes'] as const;

/**
 * Users, their roles and permission scopes. `create`/`findByEmail`/`count` serve bootstrap and
 * login without a principal. The other methods act for a principal whose route permission is
 * checked: tenancy, no-escalation (docs/adr/0010) and scope restrictions are enforced here.
 */
export class UserService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly deps: UserServiceDeps,
  ) {}

  async create(input: NewUser): Promise<User> {
    const email = normaliseEmail(input.email);
    if (await this.em().count(User, { email })) throw emailTaken();
    const user = new User();
    user.account = this.em().getReference(Account, input.accountId);
    user.email = email;
    user.name = input.name?.trim() ?? '';
    user.locale = input.locale ?? 'en';
    user.active = input.active ?? true;
    if (input.password !== undefined) {
      assertPasswordPolicy(input.password);
      user.passwordHash = await hashSecret(input.password);
    }
    for (const roleId of input.roleIds ?? []) user.roles.add(this.em().getReference(Role, roleId));
    for (const id of input.permissionScopeIds ?? [])
      user.permissionScopes.add(this.em().getReference(PermissionScope, id));
    await this.em().persistAndFlush(user);
    return user;
  }

  findByEmail(email: string): Promise<User | null> {
    return this.em().findOne(User, { email: normaliseEmail(email) }, { populate: ['account'] });
  }

  count(): Promise<number> {
    return this.em().count(User, {});
  }

  /** Users of the acting account (the principal's own, or a reachable sub-account). */
  async list(principal: Principal, params: ListParams, accountId?: string): Promise<ListResult<UserView>> {
    const account = await this.deps.accounts.actingAccount(principal, accountId);
    const where: FilterQuery<User> = { account };
    if (params.search) {
      const pattern = likePattern(params.search);
      where.$or = [{ name: { $ilike: pattern } }, { email: { $ilike: pattern } }];
    }
    const [rows, total] = await this.em().findAndCount(User, where, {
      populate: POPULATE,
      strategy: 'select-in',
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(await this.views(rows), total, params);
  }

  async get(principal: Principal, id: string): Promise<UserView> {
    const [view] = await this.views([await this.reachable(principal, id)]);
    return view!;
  }

  /** The signed-in user themself. */
  async me(principal: Principal): Promise<UserView> {
    if (!principal.userId) throw errors.forbidden('USER_REQUIRED', 'This route needs a signed-in user');
    return this.get(principal, principal.userId);
  }

  /**
   * Creates a user with roles and scopes the principal may hand out. Without a password and
   * without `suppressInvitation` the user gets an invitation link by mail.
   */
  async createManaged(principal: Principal, input: ManagedNewUser): Promise<CreatedUser> {
    const account = await this.deps.accounts.actingAccount(principal, input.accountId);
    const roles = await this.deps.roles.assignable(account, unique(input.roleIds), (id) =>
      errors.validation(`Role ${id} does not exist or cannot be assigned in this account`, [
        { path: '/roleIds', id },
      ]),
    );
    assertMayGrant(
      principal,
      roles.flatMap((r) => r.permissions),
    );
    const scopeIds = unique(input.permissionScopeIds);
    await this.assertScopesAssignable(principal, account, scopeIds);
    const user = await this.create({
      ...input,
      accountId: account.id,
      roleIds: roles.map((r) => r.id),
      permissionScopeIds: scopeIds,
    });
    const invitation =
      input.password === undefined && !input.suppressInvitation
        ? await this.deps.invitations.issue(user)
        : null;
    return { ...(await this.get(principal, user.id)), invitation };
  }

  async update(principal: Principal, id: string, changes: UserChanges): Promise<UserView> {
    const user = await this.reachable(principal, id);
    assertOutranks(principal, holdings(user));
    if (changes.active === false && user.id === principal.userId) {
      throw errors.conflict('SELF_LOCKOUT', 'You cannot deactivate yourself', [{ path: '/active' }]);
    }
    if (changes.name !== undefined) user.name = changes.name.trim();
    if (changes.locale !== undefined) user.locale = changes.locale;
    if (changes.active !== undefined) user.active = changes.active;
    if (changes.permissionScopeIds !== undefined) {
      const ids = unique(changes.permissionScopeIds);
      await this.assertScopesAssignable(principal, user.account, ids);
      user.permissionScopes.set(ids.map((sid) => this.em().getReference(PermissionScope, sid)));
    }
    await this.em().flush();
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const user = await this.reachable(principal, id);
    if (user.id === principal.userId) {
      throw errors.deleteBlocked('You cannot delete yourself', [{ type: 'user', id: user.id }]);
    }
    assertOutranks(principal, holdings(user));
    await this.em().removeAndFlush(user);
  }

  /** Gives one role; the user's other roles and fields stay as they are. Idempotent. */
  async addRole(principal: Principal, id: string, roleId: string): Promise<UserView> {
    const user = await this.reachable(principal, id);
    assertOutranks(principal, holdings(user));
    const [role] = await this.deps.roles.assignable(user.account, [roleId], (rid) =>
      errors.notFound('Role', rid),
    );
    assertMayGrant(principal, role!.permissions);
    await this.em()
      .getConnection()
      .execute('INSERT INTO user_roles (user_id, role_id) VALUES (?, ?) ON CONFLICT DO NOTHING', [
        user.id,
        role!.id,
      ]);
    await this.roleEvent(principal, user, 'user.role.add', role!);
    return this.reloaded(principal, id);
  }

  /** Takes one role away; nothing else about the user changes. Idempotent for a role not held. */
  async removeRole(principal: Principal, id: string, roleId: string): Promise<UserView> {
    const user = await this.reachable(principal, id);
    assertOutranks(principal, holdings(user));
    const role = await this.deps.roles.get(principal, roleId);
    await this.em()
      .getConnection()
      .execute('DELETE FROM user_roles WHERE user_id = ? AND role_id = ?', [user.id, roleId]);
    await this.roleEvent(principal, user, 'user.role.remove', role);
    return this.reloaded(principal, id);
  }

  /** Sends a fresh invitation link (the old one stops working) to a user without a password. */
  async reinvite(principal: Principal, id: string): Promise<IssuedInvitation> {
    const user = await this.reachable(principal, id);
    assertOutranks(principal, holdings(user));
    if (user.passwordHash) {
      throw errors.conflict(
        'PASSWORD_ALREADY_SET',
        'The user has set a password already; no invitation is needed',
      );
    }
    return this.deps.invitations.issue(user);
  }

  private async reachable(principal: Principal, id: string): Promise<User> {
    const user = await this.em().findOne(User, { id }, { populate: POPULATE, strategy: 'select-in' });
    if (!user || !canReach(principal, user.account)) throw errors.notFound('User', id);
    return user;
  }

  private roleEvent(principal: Principal, user: User, action: string, role: Role): Promise<unknown> {
    return this.deps.audit.record({
      accountId: user.account.id,
      actor: actorOf(principal),
      action,
      target: { type: 'user', id: user.id },
      details: { roleId: role.id, role: role.name, permissions: role.permissions },
    });
  }

  /** Re-reads after a write done in SQL, which the identity map does not see. */
  private reloaded(principal: Principal, id: string): Promise<UserView> {
    this.em().clear();
    return this.get(principal, id);
  }

  private async views(users: User[]): Promise<UserView[]> {
    const open = users.filter((u) => !u.passwordHash).map((u) => u.id);
    const pending = await this.deps.invitations.pending(open);
    return users.map((user) => ({ user, invitationPending: pending.has(user.id) }));
  }

  /**
   * Scopes must belong to the account (or below) and be visible to the principal; a principal
   * that is itself restricted cannot make anyone unrestricted or give scopes it lacks.
   */
  private async assertScopesAssignable(principal: Principal, account: Account, ids: string[]): Promise<void> {
    await this.deps.permissionScopes.assignable(principal, account, ids, (sid) =>
      errors.validation(`Permission scope ${sid} does not exist in this account`, [
        { path: '/permissionScopeIds', id: sid },
      ]),
    );
    if (!scopesWithin(principal.permissionScopeIds, ids.length > 0 ? ids : null)) {
      throw scopeRestricted(
        'You can only restrict users to permission scopes you are restricted to yourself',
      );
    }
  }
}

const unique = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])];
