import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { isUuid } from '../platform/crypto/ids.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { Account, type StoredOAuthConfig, type UiSettings } from './account.entity.js';

export const ACCOUNT_SORTABLE = ['title', 'createdAt', 'updatedAt', 'hierarchyLevel'] as const;

export interface OAuthConfigInput {
  scope: string;
  auth_uri: string;
  client_id: string;
  token_uri: string;
  redirect_uri: string;
  client_secret?: string;
  user_info_uri: string;
  issuer?: string;
  default_role?: string;
}

export interface AccountInput {
  title?: string;
  description?: string | null;
  parentId?: string;
  mandatoryTwoFactor?: boolean;
  retentionMonths?: number | string;
  timeZone?: string;
  uiSettings?: UiSettings;
  metaInfo?: Record<string, unknown>;
  modules?: Record<string, unknown>;
  oauthConfig?: OAuthConfigInput | null;
}

export const SECRET_MASK = '********';

/** The tenancy rule: a principal works in its home account and below, never above or beside. */
export const canReach = (principal: Principal, account: Account): boolean =>
  account.path.includes(principal.accountId);

/**
 * Accounts and their hierarchy. Callers have already checked the route permission; every
 * method here checks that the target account lies in the principal's subtree.
 */
export class AccountService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly secretBox: SecretBox,
    private readonly publicUrl: string,
  ) {}

  /** The account if the principal may reach it; otherwise NOT_FOUND, so siblings stay invisible. */
  async reachable(principal: Principal, id: string): Promise<Account> {
    const account = await this.em().findOne(Account, { id });
    if (!account || !canReach(principal, account)) throw errors.notFound('Account', id);
    return account;
  }

  /** No tenancy check: for flows without a principal yet (federated login). */
  findById(id: string): Promise<Account | null> {
    return this.em().findOne(Account, { id });
  }

  /** Resolves the account a request acts in: the given one (checked) or the principal's own. */
  async actingAccount(principal: Principal, accountId: string | undefined): Promise<Account> {
    return this.reachable(principal, accountId ?? principal.accountId);
  }

  async list(principal: Principal, params: ListParams, parentId?: string): Promise<ListResult<Account>> {
    const where: FilterQuery<Account> = { path: { $contains: [principal.accountId] } };
    if (parentId) where.parent = parentId;
    if (params.search) {
      const or: FilterQuery<Account>[] = [{ title: { $ilike: likePattern(params.search) } }];
      if (isUuid(params.search)) or.push({ id: params.search });
      where.$or = or;
    }
    const [rows, total] = await this.em().findAndCount(Account, where, {
      orderBy: params.orderBy.map((o) => ({ [o.field]: o.direction })),
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async create(principal: Principal, input: AccountInput): Promise<Account> {
    const parent = await this.actingAccount(principal, input.parentId);
    const account = new Account();
    account.parent = parent;
    account.path = [...parent.path, account.id];
    account.hierarchyLevel = parent.hierarchyLevel + 1;
    account.title = requireTitle(input.title);
    this.apply(account, input);
    await this.em().persistAndFlush(account);
    return account;
  }

  /** The first account of an empty instance. */
  async createRoot(title: string): Promise<Account> {
    const account = new Account();
    account.path = [account.id];
    account.title = title;
    await this.em().persistAndFlush(account);
    return account;
  }

  async update(principal: Principal, id: string, input: AccountInput): Promise<Account> {
    const account = await this.reachable(principal, id);
    if (input.parentId !== undefined && input.parentId !== account.parent?.id) {
      throw errors.validation('Moving an account to another parent is an instance-operator task', [
        { path: '/parentId' },
      ]);
    }
    if (input.title !== undefined) account.title = requireTitle(input.title);
    this.apply(account, input);
    await this.em().flush();
    return account;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const account = await this.reachable(principal, id);
    if (account.id === principal.accountId) {
      throw errors.deleteBlocked('An account cannot delete itself', [{ type: 'account', id: account.id }]);
    }
    const children = await this.em().find(
      Account,
      { parent: account.id },
      { fields: ['id', 'title'], limit: 20 },
    );
    if (children.length > 0) {
      throw errors.deleteBlocked(
        'The account has sub-accounts',
        children.map((c) => ({ type: 'account', id: c.id, title: c.title })),
      );
    }
    await this.em().removeAndFlush(account);
  }

  /** Ancestors first, the account itself last. */
  async lineage(account: Account): Promise<Account[]> {
    const rows = await this.em().find(Account, { id: { $in: account.path } });
    return account.path.map((id) => rows.find((r) => r.id === id)).filter((a): a is Account => !!a);
  }

  /** Settings the account takes over from its ancestors: the color theme and the map's basemap. */
  async effectiveUiSettings(account: Account): Promise<UiSettings> {
    const lineage = [...(await this.lineage(account))].reverse();
    const colorTheme = lineage.find((a) => a.uiSettings.colorTheme)?.uiSettings.colorTheme;
    const mapStyleUrl = lineage.find((a) => a.uiSettings.mapStyleUrl)?.uiSettings.mapStyleUrl;
    return {
      ...account.uiSettings,
      ...(colorTheme ? { colorTheme } : {}),
      ...(mapStyleUrl ? { mapStyleUrl } : {}),
    };
  }

  /** Reply form of the OAuth configuration: the client secret is never returned. */
  publicOAuthConfig(account: Account): OAuthConfigInput | null {
    if (!account.oauthConfig) return null;
    const { client_secret_sealed: _sealed, ...rest } = account.oauthConfig;
    return { ...rest, client_secret: SECRET_MASK };
  }

  oauthClientSecret(account: Account): string | undefined {
    return account.oauthConfig ? this.secretBox.open(account.oauthConfig.client_secret_sealed) : undefined;
  }

  private apply(account: Account, input: AccountInput): void {
    if (input.description !== undefined) account.description = input.description;
    if (input.mandatoryTwoFactor !== undefined) account.mandatoryTwoFactor = input.mandatoryTwoFactor;
    if (input.retentionMonths !== undefined)
      account.retentionMonths = parseRetentionMonths(input.retentionMonths);
    if (input.timeZone !== undefined) account.timeZone = parseTimeZone(input.timeZone);
    if (input.uiSettings !== undefined) account.uiSettings = parseUiSettings(input.uiSettings);
    if (input.metaInfo !== undefined) account.metaInfo = input.metaInfo;
    if (input.modules !== undefined) account.modules = input.modules;
    if (input.oauthConfig !== undefined) account.oauthConfig = this.oauthConfig(account, input.oauthConfig);
  }

  private oauthConfig(account: Account, input: OAuthConfigInput | null): StoredOAuthConfig | null {
    if (input === null) return null;
    const expected = `${this.publicUrl}/api/v1/oauth2/callback`;
    for (const field of ['auth_uri', 'token_uri', 'user_info_uri', 'redirect_uri'] as const) {
      if (!isHttpUrl(input[field])) {
        throw errors.validation(`oauthConfig.${field} must be an http(s) URL`, [
          { path: `/oauthConfig/${field}` },
        ]);
      }
    }
    if (input.issuer !== undefined && !isHttpUrl(input.issuer)) {
      throw errors.validation('oauthConfig.issuer must be an http(s) URL', [{ path: '/oauthConfig/issuer' }]);
    }
    if (input.redirect_uri.replace(/\/+$/, '') !== expected) {
      throw errors.validation(
        `oauthConfig.redirect_uri must be ${expected}: the callback on the domain users log in through`,
        [{ path: '/oauthConfig/redirect_uri', expected }],
      );
    }
    const keepSecret = input.client_secret === undefined || input.client_secret === SECRET_MASK;
    const sealed = keepSecret
      ? account.oauthConfig?.client_secret_sealed
      : this.secretBox.seal(input.client_secret!);
    if (!sealed)
      throw errors.validation('oauthConfig.client_secret is required', [
        { path: '/oauthConfig/client_secret' },
      ]);
    const { client_secret: _secret, ...rest } = input;
    return { ...rest, redirect_uri: expected, client_secret_sealed: sealed };
  }
}

function requireTitle(title: string | undefined): string {
  const trimmed = title?.trim();
  if (!trimmed) throw errors.validation('title must not be empty', [{ path: '/title' }]);
  return trimmed;
}

const isHttpUrl = (value: string): boolean => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

/**
 * UI settings as given, except the map's basemap URL: http(s) or a path on this server (the
 * console fetches it from the browser), trimmed; empty means the offline basemap and is dropped.
 */
export function parseUiSettings(settings: UiSettings): UiSettings {
  const { mapStyleUrl, ...rest } = settings;
  const url = typeof mapStyleUrl === 'string' ? mapStyleUrl.trim() : '';
  if (!url) return rest;
  const sameServerPath = url.startsWith('/') && !url.startsWith('//');
  if (!sameServerPath && !isHttpUrl(url)) {
    throw errors.validation(
      'uiSettings.mapStyleUrl must be an http(s) URL or a path on this server (e.g. /maps/site.pmtiles)',
      [{ path: '/uiSettings/mapStyleUrl', value: mapStyleUrl }],
    );
  }
  return { ...rest, mapStyleUrl: url };
}

/** An IANA zone name Intl knows, in its canonical spelling (`europe/berlin` → `Europe/Berlin`). */
export function parseTimeZone(value: string): string {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: value.trim() }).resolvedOptions().timeZone;
  } catch {
    throw errors.validation('timeZone must be an IANA time zone such as Europe/Berlin or UTC', [
      { path: '/timeZone', value },
    ]);
  }
}

/** Months as a number or text; `"12,5"` (decimal comma) means 12.5. */
export function parseRetentionMonths(value: number | string): number {
  const months = typeof value === 'number' ? value : Number(value.trim().replace(',', '.'));
  const textOk = typeof value === 'number' || /^\d+([.,]\d+)?$/.test(value.trim());
  if (!textOk || !Number.isFinite(months) || months <= 0 || months > 1200) {
    throw errors.validation(
      'retentionMonths must be a number of months between 0 and 1200, e.g. 24 or "12,5"',
      [{ path: '/retentionMonths', value }],
    );
  }
  return months;
}
