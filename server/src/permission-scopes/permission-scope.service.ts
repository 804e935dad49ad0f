import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors, type AppError } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { scopeRestricted } from '../roles/privileges.js';
import { PermissionScope } from './permission-scope.entity.js';
import { scopeFilter } from './scope-filter.js';

export const PERMISSION_SCOPE_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface PermissionScopeInput {
  title?: string;
  description?: string;
}

/**
 * Permission scopes (access areas) of an account. Callers have checked the route permission;
 * here the account must be reachable and the scope visible through the caller's own scopes
 * (scope-filter.ts), the same rule twins and devices follow.
 */
export class PermissionScopeService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<PermissionScope>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where: FilterQuery<PermissionScope> = {
      $and: [{ account }, scopeFilter(principal).where<PermissionScope>('id')],
    };
    if (params.search) where.$and!.push({ title: { $ilike: likePattern(params.search) } });
    const [rows, total] = await this.em().findAndCount(PermissionScope, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<PermissionScope> {
    const notFound = () => errors.notFound('Permission scope', id);
    const scope = await this.em().findOne(PermissionScope, { id }, { populate: ['account'] });
    if (!scope || !canReach(principal, scope.account)) throw notFound();
    scopeFilter(principal).assertVisible(scope.id, notFound);
    return scope;
  }

  /** A principal restricted to scopes cannot make new ones: it could never see them. */
  async create(
    principal: Principal,
    input: PermissionScopeInput & { accountId?: string },
  ): Promise<PermissionScope> {
    if (scopeFilter(principal).restricted) {
      throw scopeRestricted('Users restricted to permission scopes cannot create new ones');
    }
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const scope = new PermissionScope();
    scope.account = account;
    await this.apply(scope, input);
    await this.em().persistAndFlush(scope);
    return scope;
  }

  async update(principal: Principal, id: string, input: PermissionScopeInput): Promise<PermissionScope> {
    const scope = await this.get(principal, id);
    await this.apply(scope, input);
    await this.em().flush();
    return scope;
  }

  /**
   * Refused while users are restricted to the scope: dropping a user's last scope would lift
   * the restriction and widen what they see. Refused too while twins, devices or gateways carry it (their
   * foreign keys restrict the deletion): they would silently lose their access area.
   */
  async delete(principal: Principal, id: string): Promise<void> {
    const scope = await this.get(principal, id);
    const users = await this.em()
      .getConnection()
      .execute<Array<{ id: string; email: string }>>(
        `SELECT u.id, u.email FROM user_permission_scopes ups JOIN users u ON u.id = ups.user_id
          WHERE ups.permission_scope_id = ? ORDER BY u.email LIMIT 20`,
        [scope.id],
      );
    if (users.length > 0) {
      throw errors.deleteBlocked(
        'Users are restricted to this permission scope; change them first',
        users.map((u) => ({ type: 'user', id: u.id, email: u.email })),
      );
    }
    const holders = await this.em()
      .getConnection()
      .execute<Array<{ type: string; id: string; title: string }>>(
        `(SELECT 'digitalTwin' AS type, id, title FROM digital_twins
           WHERE permission_scope_id = ? OR effective_permission_scope_id = ? ORDER BY title, id LIMIT 20)
         UNION ALL
         (SELECT 'virtualDevice' AS type, id, title FROM virtual_devices
           WHERE permission_scope_id = ? ORDER BY title, id LIMIT 20)
         UNION ALL
         (SELECT 'gateway' AS type, id, title FROM gateways
           WHERE permission_scope_id = ? ORDER BY title, id LIMIT 20)`,
        [scope.id, scope.id, scope.id, scope.id],
      );
    if (holders.length > 0) {
      throw errors.deleteBlocked(
        'Twins, devices or gateways are in this permission scope; change them first',
        holders,
      );
    }
    await this.em().removeAndFlush(scope);
  }

  /**
   * Scopes a user of `account` may be restricted to: those of the account and its sub-accounts,
   * and only ones the principal sees itself. Any other id gets `onMissing(id)`.
   */
  async assignable(
    principal: Principal,
    account: Account,
    ids: readonly string[],
    onMissing: (id: string) => AppError,
  ): Promise<PermissionScope[]> {
    if (ids.length === 0) return [];
    const filter = scopeFilter(principal);
    const rows = await this.em().find(PermissionScope, {
      id: { $in: [...ids] },
      account: { path: { $contains: [account.id] } },
    });
    const missing = ids.find((id) => !rows.some((r) => r.id === id) || !filter.allows(id));
    if (missing) throw onMissing(missing);
    return ids.map((id) => rows.find((r) => r.id === id)!);
  }

  private async apply(scope: PermissionScope, input: PermissionScopeInput): Promise<void> {
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (!title)
        throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
      if (await this.em().count(PermissionScope, { account: scope.account, title, id: { $ne: scope.id } })) {
        throw errors.conflict(
          'PERMISSION_SCOPE_TITLE_TAKEN',
          `A permission scope titled "${title}" exists already`,
          [problem('/title', 'unique', { value: title })],
        );
      }
      scope.title = title;
    }
    if (!scope.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) scope.description = input.description;
  }
}
