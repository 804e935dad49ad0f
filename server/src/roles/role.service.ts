import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import { errors, type AppError } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { BUILT_IN_ROLES } from './permissions.js';
import { assertMayGrant, normalisePermissions } from './privileges.js';
import { Role } from './role.entity.js';

export const ROLE_SORTABLE = ['name', 'createdAt', 'updatedAt'] as const;

export interface RoleInput {
  name?: string;
  description?: string;
  permissions?: string[];
}

/**
 * Roles: built-in ones (no account) offered everywhere, and custom roles of an account, which
 * its sub-accounts may use but only the account itself (or an ancestor) may change. Callers
 * have checked the route permission; account reachability and escalation are checked here.
 * Changes of custom roles are audited with the change (`role.create`, `role.change`, `role.delete`).
 */
export class RoleService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly audit: AuditService,
  ) {}

  private recorded(principal: Principal, role: Role, action: string): Promise<unknown> {
    return this.audit.record({
      accountId: role.account!.id,
      actor: actorOf(principal),
      action,
      target: { type: 'role', id: role.id },
      details: { name: role.name, permissions: role.permissions },
    });
  }

  /** Creates or refreshes the built-in roles, so their permissions follow the code. */
  async ensureBuiltIns(): Promise<void> {
    const existing = await this.em().find(Role, { account: null, builtIn: true });
    for (const def of BUILT_IN_ROLES) {
      const role = existing.find((r) => r.name === def.name) ?? new Role();
      role.name = def.name;
      role.description = def.description;
      role.permissions = def.permissions;
      role.builtIn = true;
      this.em().persist(role);
    }
    await this.em().flush();
  }

  builtIn(name: string): Promise<Role | null> {
    return this.em().findOne(Role, { account: null, builtIn: true, name });
  }

  /** Roles usable in the acting account: built-in, its own and its ancestors'. */
  async list(principal: Principal, params: ListParams, accountId?: string): Promise<ListResult<Role>> {
    const acting = await this.accounts.actingAccount(principal, accountId);
    const where: FilterQuery<Role> = {
      $and: [{ $or: [{ account: null }, { account: { $in: acting.path } }] }],
    };
    if (params.search) where.$and!.push({ name: { $ilike: likePattern(params.search) } });
    const [rows, total] = await this.em().findAndCount(Role, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  /** A role the principal may see: built-in, of a reachable account, or of an ancestor of its home. */
  async get(principal: Principal, id: string): Promise<Role> {
    const role = await this.em().findOne(Role, { id }, { populate: ['account'] });
    if (!role || !(await this.visible(principal, role))) throw errors.notFound('Role', id);
    return role;
  }

  async create(principal: Principal, input: RoleInput & { accountId?: string }): Promise<Role> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const role = new Role();
    role.account = account;
    await this.apply(principal, role, input);
    this.em().persist(role);
    await this.recorded(principal, role, 'role.create');
    return role;
  }

  async update(principal: Principal, id: string, input: RoleInput): Promise<Role> {
    const role = await this.changeable(principal, id);
    await this.apply(principal, role, input);
    await this.recorded(principal, role, 'role.change');
    return role;
  }

  /** Refused while users hold the role: silently taking permissions away is worse than asking. */
  async delete(principal: Principal, id: string): Promise<void> {
    const role = await this.changeable(principal, id);
    const holders = await this.em()
      .getConnection()
      .execute<Array<{ id: string; email: string }>>(
        'SELECT u.id, u.email FROM user_roles ur JOIN users u ON u.id = ur.user_id WHERE ur.role_id = ? ORDER BY u.email LIMIT 20',
        [role.id],
      );
    if (holders.length > 0) {
      throw errors.deleteBlocked(
        'Users hold this role; remove it from them first',
        holders.map((u) => ({ type: 'user', id: u.id, email: u.email })),
      );
    }
    this.em().remove(role);
    await this.recorded(principal, role, 'role.delete');
  }

  /**
   * The roles a user of `account` may be given: built-in ones and those of the account or its
   * ancestors. Any other id (missing, sibling's, child's) gets `onMissing(id)`.
   */
  async assignable(
    account: Account,
    ids: readonly string[],
    onMissing: (id: string) => AppError,
  ): Promise<Role[]> {
    if (ids.length === 0) return [];
    const rows = await this.em().find(Role, {
      id: { $in: [...ids] },
      $or: [{ account: null }, { account: { $in: account.path } }],
    });
    const missing = ids.find((id) => !rows.some((r) => r.id === id));
    if (missing) throw onMissing(missing);
    return ids.map((id) => rows.find((r) => r.id === id)!);
  }

  private async visible(principal: Principal, role: Role): Promise<boolean> {
    if (!role.account) return true;
    if (canReach(principal, role.account)) return true;
    const home = await this.em().findOne(Account, { id: principal.accountId });
    return !!home?.path.includes(role.account.id);
  }

  /** Built-in roles follow the code; inherited roles belong to an account above the principal. */
  private async changeable(principal: Principal, id: string): Promise<Role> {
    const role = await this.get(principal, id);
    if (role.builtIn || !role.account) {
      throw errors.forbidden('BUILT_IN_ROLE', `The built-in role ${role.name} cannot be changed or deleted`, [
        { id: role.id },
      ]);
    }
    if (!canReach(principal, role.account)) {
      throw errors.forbidden(
        'INHERITED_ROLE',
        `Role ${role.name} belongs to a parent account and is changed there`,
        [{ id: role.id }],
      );
    }
    return role;
  }

  private async apply(principal: Principal, role: Role, input: RoleInput): Promise<void> {
    if (input.name !== undefined) {
      const name = input.name.trim();
      if (!name)
        throw errors.validation('name must not be empty', [problem('/name', 'minLength', { limit: 1 })]);
      const builtInName = BUILT_IN_ROLES.some((r) => r.name.toLowerCase() === name.toLowerCase());
      const taken = await this.em().count(Role, { account: role.account, name, id: { $ne: role.id } });
      if (builtInName || taken > 0) {
        throw errors.conflict('ROLE_NAME_TAKEN', `A role named "${name}" exists already`, [
          problem('/name', 'unique', { value: name }),
        ]);
      }
      role.name = name;
    }
    if (!role.name) throw errors.validation('name is required', [problem('/name', 'required')]);
    if (input.description !== undefined) role.description = input.description;
    if (input.permissions !== undefined) role.permissions = normalisePermissions(input.permissions);
    // Checked on the final set: editing a role one could not grant in full is refused too.
    assertMayGrant(principal, role.permissions);
  }
}
