import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import {
  assertMayGrant,
  assertOutranks,
  normalisePermissions,
  scopeRestricted,
} from '../roles/privileges.js';
import { ApiKey } from './api-key.entity.js';

export const API_KEY_SORTABLE = ['title', 'createdAt', 'updatedAt', 'lastUsedAt'] as const;
export const API_KEY_PREFIX = 'swk_';
/** Characters kept for display: `swk_` and 8 of the random part, never enough to guess the rest. */
const DISPLAY_PREFIX_LENGTH = 12;

export interface ApiKeyInput {
  title?: string;
  permissions?: string[];
  active?: boolean;
}

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** The clear key: returned once at creation, never stored. */
  key: string;
}

/** `swk_` followed by 256 random bits (base64url); the prefix lets secret scanners spot leaked keys. */
export const generateApiKey = (): string => `${API_KEY_PREFIX}${randomToken(32)}`;

/**
 * API keys of an account. Only their SHA-256 is stored (auth/authenticate.ts looks keys up by
 * it). Callers have checked the route permission; tenancy and escalation are checked here. What a
 * key may do is audited with the change (`apiKey.create`, `apiKey.change`, `apiKey.delete`).
 */
export class ApiKeyService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly audit: AuditService,
  ) {}

  private recorded(principal: Principal, apiKey: ApiKey, action: string): Promise<unknown> {
    return this.audit.record({
      accountId: apiKey.account.id,
      actor: actorOf(principal),
      action,
      target: { type: 'apiKey', id: apiKey.id },
      details: { title: apiKey.title, permissions: apiKey.permissions, active: apiKey.active },
    });
  }

  async list(principal: Principal, params: ListParams, accountId?: string): Promise<ListResult<ApiKey>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where: FilterQuery<ApiKey> = { account };
    if (params.search) where.title = { $ilike: likePattern(params.search) };
    const [rows, total] = await this.em().findAndCount(ApiKey, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<ApiKey> {
    const key = await this.em().findOne(ApiKey, { id }, { populate: ['account'] });
    if (!key || !canReach(principal, key.account)) throw errors.notFound('API key', id);
    return key;
  }

  /**
   * Keys see every permission scope, so principals restricted to scopes cannot make them; and a
   * key never carries a permission its creator lacks.
   */
  async create(principal: Principal, input: ApiKeyInput & { accountId?: string }): Promise<IssuedApiKey> {
    if (principal.permissionScopeIds !== null) {
      throw scopeRestricted(
        'API keys are not limited to permission scopes; a restricted user cannot create one',
      );
    }
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const key = generateApiKey();
    const apiKey = new ApiKey();
    apiKey.account = account;
    apiKey.prefix = key.slice(0, DISPLAY_PREFIX_LENGTH);
    apiKey.keyHash = sha256(key);
    apiKey.createdByUserId = principal.userId;
    this.apply(principal, apiKey, input);
    this.em().persist(apiKey);
    await this.recorded(principal, apiKey, 'apiKey.create');
    return { apiKey, key };
  }

  async update(principal: Principal, id: string, input: ApiKeyInput): Promise<ApiKey> {
    const apiKey = await this.get(principal, id);
    assertOutranks(principal, { permissions: apiKey.permissions, permissionScopeIds: null });
    this.apply(principal, apiKey, input);
    if (input.permissions !== undefined || input.active !== undefined) {
      await this.recorded(principal, apiKey, 'apiKey.change');
    } else {
      await this.em().flush();
    }
    return apiKey;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const apiKey = await this.get(principal, id);
    assertOutranks(principal, { permissions: apiKey.permissions, permissionScopeIds: null });
    this.em().remove(apiKey);
    await this.recorded(principal, apiKey, 'apiKey.delete');
  }

  private apply(principal: Principal, apiKey: ApiKey, input: ApiKeyInput): void {
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (!title)
        throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
      apiKey.title = title;
    }
    if (!apiKey.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.permissions !== undefined) {
      apiKey.permissions = normalisePermissions(input.permissions);
      assertMayGrant(principal, apiKey.permissions);
    }
    if (input.active !== undefined) apiKey.active = input.active;
  }
}
