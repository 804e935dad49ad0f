import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { actorOf, type AuditRecord, type AuditService } from '../audit/audit.service.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { isUuid } from '../platform/crypto/ids.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { Account, type UiSettings } from './account.entity.js';
import {
  assertMayConfigureIdentityProvider,
  isHttpUrl,
  oauthConfigChange,
  publicOAuthConfig,
  storedOAuthConfig,
  type OAuthConfigInput,
  type PublicOAuthConfig,
} from './oauth-config.js';

export { SECRET_MASK, type OAuthConfigInput } from './oauth-config.js';

export const ACCOUNT_SORTABLE = ['title', 'createdAt', 'updatedAt', 'hierarchyLevel'] as const;

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

/** The tenancy rule: a principal works in its home account and below, never above or beside. */
export const canReach = (principal: Principal, account: Account): boolean =>
  account.path.includes(principal.accountId);

/**
 * An account id as shown to a principal: null for accounts above its home account, whose ids a
 * sub-account's users and keys never learn (objects they inherit from there included).
 */
export const shownAccountId = (id: string, above: ReadonlySet<string>): string | null =>
  above.has(id) ? null : id;

/** The parent of a reachable account, unless that parent lies above the principal's home account. */
export const shownParentId = (principal: Principal, account: Account): string | null =>
  account.id === principal.accountId ? null : (account.parent?.id ?? null);

/**
 * Accounts and their hierarchy. Callers have already checked the route permission; every
 * method here checks that the target account lies in the principal's subtree, and that a change
 * of the identity configuration (OAuth) is made by a holder of identityProvider.manage. Changes of
 * the identity configuration are written to the audit log in the same transaction.
 */
export class AccountService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly secretBox: SecretBox,
    private readonly publicUrl: string,
    private readonly audit: AuditService,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** The account if the principal may reach it; otherwise NOT_FOUND, so siblings stay invisible. */
  async reachable(principal: Principal, id: string): Promise<Account> {
    const account = await this.em().findOne(Account, { id });
    if (!account || !canReach(principal, account)) throw errors.notFound('Account', id);
    return account;
  }

  /** Ids of the accounts above the principal's home account (see `shownAccountId`). */
  async idsAbove(principal: Principal): Promise<ReadonlySet<string>> {
    const home = await this.em().findOne(Account, { id: principal.accountId }, { fields: ['path'] });
    return new Set(home?.path.slice(0, -1) ?? []);
  }

  /** No tenancy check: for flows without a principal yet (federated login). */
  findById(id: string): Promise<Account | null> {
    return this.em().findOne(Account, { id });
  }

  /** Resolves the account a request acts in: the given one (checked) or the principal's own. */
  async actingAccount(principal: Principal, accountId: string | undefined): Promise<Account> {
    return this.reachable(principal, accountId ?? principal.accountId);
  }

  /**
   * The id of the account a request acts in, without loading it when that is the principal's own:
   * a principal's home account is always reachable (it goes with its users and keys). Lists that
   * only filter by the id save a query per request this way.
   */
  async actingAccountId(principal: Principal, accountId: string | undefined): Promise<string> {
    if (accountId === undefined || accountId === principal.accountId) return principal.accountId;
    return (await this.reachable(principal, accountId)).id;
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
    if (input.oauthConfig !== undefined) assertMayConfigureIdentityProvider(principal);
    const parent = await this.actingAccount(principal, input.parentId);
    const account = new Account();
    account.parent = parent;
    account.path = [...parent.path, account.id];
    account.hierarchyLevel = parent.hierarchyLevel + 1;
    account.title = requireTitle(input.title);
    const changes = this.apply(principal, account, input);
    this.em().persist(account);
    await this.commit(changes);
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
    if (input.oauthConfig !== undefined) assertMayConfigureIdentityProvider(principal);
    const account = await this.reachable(principal, id);
    if (input.parentId !== undefined && input.parentId !== account.parent?.id) {
      throw errors.validation('Moving an account to another parent is an instance-operator task', [
        { path: '/parentId' },
      ]);
    }
    if (input.title !== undefined) account.title = requireTitle(input.title);
    await this.commit(this.apply(principal, account, input));
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

  /**
   * The UI settings a client applies: each inherited key comes from the nearest account, itself
   * first, that sets it (spec: sub-accounts take over the colour theme). Resolved here so the console,
   * the desktop shell and API clients all see the same result.
   */
  async effectiveUiSettings(account: Account): Promise<UiSettings> {
    const nearestFirst = [...(await this.lineage(account))].reverse();
    const effective: UiSettings = { ...account.uiSettings };
    for (const key of INHERITED_UI_SETTINGS) {
      const setter = nearestFirst.find((a) => isSet(a.uiSettings[key]));
      if (setter) Object.assign(effective, { [key]: setter.uiSettings[key] });
    }
    return effective;
  }

  /** Reply form of the OAuth configuration: the client secret is never returned. */
  publicOAuthConfig(account: Account): PublicOAuthConfig | null {
    return publicOAuthConfig(account.oauthConfig);
  }

  oauthClientSecret(account: Account): string | undefined {
    return account.oauthConfig ? this.secretBox.open(account.oauthConfig.client_secret_sealed) : undefined;
  }

  /** Applies the input; returns the audit events of identity-configuration changes it made. */
  private apply(principal: Principal, account: Account, input: AccountInput): AuditRecord[] {
    const events: AuditRecord[] = [];
    if (input.description !== undefined) account.description = input.description;
    if (input.mandatoryTwoFactor !== undefined && input.mandatoryTwoFactor !== account.mandatoryTwoFactor) {
      events.push({
        accountId: account.id,
        actor: actorOf(principal),
        action: 'account.mandatoryTwoFactor.change',
        target: { type: 'account', id: account.id },
        details: { from: account.mandatoryTwoFactor, to: input.mandatoryTwoFactor },
      });
      account.mandatoryTwoFactor = input.mandatoryTwoFactor;
    }
    if (input.retentionMonths !== undefined)
      account.retentionMonths = parseRetentionMonths(input.retentionMonths);
    if (input.timeZone !== undefined) account.timeZone = parseTimeZone(input.timeZone);
    if (input.uiSettings !== undefined) account.uiSettings = parseUiSettings(input.uiSettings);
    if (input.metaInfo !== undefined) account.metaInfo = input.metaInfo;
    if (input.modules !== undefined) account.modules = input.modules;
    if (input.oauthConfig !== undefined) {
      const before = account.oauthConfig;
      account.oauthConfig =
        input.oauthConfig === null
          ? null
          : storedOAuthConfig(principal, account, input.oauthConfig, {
              publicUrl: this.publicUrl,
              secretBox: this.secretBox,
              now: this.clock(),
            });
      const change = oauthConfigChange(principal, account, before, account.oauthConfig);
      if (change) events.push(change);
    }
    return events;
  }

  /** Flushes the change; audit events flush with it, so a change is never stored unrecorded. */
  private async commit(events: AuditRecord[]): Promise<void> {
    if (events.length === 0) return this.em().flush();
    await this.audit.recordAll(events, this.em());
  }
}

/** Keys a sub-account takes over from its parent while it does not set them itself. */
export const INHERITED_UI_SETTINGS = ['colorTheme', 'systemUiTheme', 'systemFonts', 'mapStyleUrl'] as const;

const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

function requireTitle(title: string | undefined): string {
  const trimmed = title?.trim();
  if (!trimmed)
    throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
  return trimmed;
}

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
      [{ ...problem('/uiSettings/mapStyleUrl', 'format', { format: 'map-style-url' }), value: mapStyleUrl }],
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
      { ...problem('/timeZone', 'format', { format: 'time-zone' }), value },
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
