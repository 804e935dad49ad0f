import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { errors } from '../platform/errors.js';
import { scopeRestricted } from '../roles/privileges.js';
import { DashboardShare } from './dashboard-share.entity.js';
import type { Dashboard } from './dashboard.entity.js';
import type { DashboardService } from './dashboard.service.js';

/** `swd_` and 256 random bits: a prefix of its own, so it is never mistaken for an account API key. */
export const DASHBOARD_KEY_PREFIX = 'swd_';
const DISPLAY_PREFIX_LENGTH = 12;

export interface IssuedShare {
  share: DashboardShare;
  /** The clear key: returned once, never stored. */
  key: string;
}

/** A published dashboard as a key opened it. */
export interface OpenedShare {
  dashboard: Dashboard;
  shareId: string;
  keyHash: string;
}

/**
 * Publishing dashboards (docs/public-dashboards.md). Callers have checked dashboard.manage; the
 * dashboard must be reachable. A user restricted to permission scopes cannot publish: the public
 * view is not restricted (like an API key) and would show what the layout hides from that user.
 * Publishing, rotating and revoking are audited; `onKeysChanged` lets open public sockets re-check
 * their key at once (a revoked or rotated key closes them).
 */
export class DashboardShareService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly dashboards: DashboardService,
    private readonly audit: AuditService,
    private readonly onKeysChanged: () => void = () => undefined,
  ) {}

  async status(principal: Principal, dashboardId: string): Promise<DashboardShare | null> {
    const dashboard = await this.dashboards.get(principal, dashboardId);
    return this.em().findOne(DashboardShare, { dashboard });
  }

  /** Publishes the dashboard with a new key, or replaces the key of a published one (rotation). */
  async publish(principal: Principal, dashboardId: string): Promise<IssuedShare> {
    if (principal.permissionScopeIds !== null)
      throw scopeRestricted(
        'A public dashboard is not limited to permission scopes; a restricted user cannot publish one',
      );
    const dashboard = await this.dashboards.get(principal, dashboardId);
    const existing = await this.em().findOne(DashboardShare, { dashboard });
    const share = existing ?? new DashboardShare();
    const key = `${DASHBOARD_KEY_PREFIX}${randomToken(32)}`;
    share.dashboard = dashboard;
    share.prefix = key.slice(0, DISPLAY_PREFIX_LENGTH);
    share.keyHash = sha256(key);
    share.createdByUserId = principal.userId;
    share.issuedAt = new Date();
    this.em().persist(share);
    await this.recorded(principal, dashboard, share, existing ? 'dashboard.rotateKey' : 'dashboard.publish');
    if (existing) this.onKeysChanged();
    return { share, key };
  }

  /**
   * Unpublishes: the link stops working at once, open public views are closed. Revoking what is not
   * published changes nothing and succeeds (a retried or scripted revoke must not fail).
   */
  async revoke(principal: Principal, dashboardId: string): Promise<void> {
    const dashboard = await this.dashboards.get(principal, dashboardId);
    const share = await this.em().findOne(DashboardShare, { dashboard });
    if (!share) return;
    this.em().remove(share);
    await this.recorded(principal, dashboard, share, 'dashboard.unpublish');
    this.onKeysChanged();
  }

  /**
   * The published dashboard `key` opens. A wrong, rotated or revoked key, or one of another
   * dashboard, is 401 INVALID_TOKEN alike: the answer tells nothing about the dashboard.
   */
  async open(dashboardId: string, key: string | undefined): Promise<OpenedShare> {
    if (!key) throw errors.invalidToken('A public dashboard needs its key (x-api-key)');
    const keyHash = sha256(key);
    const share = await this.em().findOne(
      DashboardShare,
      { keyHash, dashboard: dashboardId },
      { populate: ['dashboard', 'dashboard.account'] },
    );
    if (!share) throw errors.invalidToken('Invalid or revoked dashboard key');
    return { dashboard: share.dashboard, shareId: share.id, keyHash };
  }

  /** The dashboard again, while the key still opens it (public sockets re-check with this); else null. */
  async reopen(opened: Pick<OpenedShare, 'shareId' | 'keyHash'>): Promise<Dashboard | null> {
    // Forked: the live hub's re-checks run outside any request's unit of work.
    const share = await this.em()
      .fork()
      .findOne(
        DashboardShare,
        { id: opened.shareId, keyHash: opened.keyHash },
        { populate: ['dashboard', 'dashboard.account'] },
      );
    return share?.dashboard ?? null;
  }

  private recorded(principal: Principal, dashboard: Dashboard, share: DashboardShare, action: string) {
    return this.audit.record({
      accountId: dashboard.account.id,
      actor: actorOf(principal),
      action,
      target: { type: 'dashboard', id: dashboard.id },
      details: { title: dashboard.title, keyPrefix: share.prefix },
    });
  }
}
