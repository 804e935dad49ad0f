import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import type { Account } from './account.entity.js';
import type { AccountService } from './account.service.js';
import { Announcement, AnnouncementState, type AnnouncementSeverity } from './announcement.entity.js';
import { User } from '../users/user.entity.js';

export interface AnnouncementInput {
  title?: string;
  message?: string;
  severity?: AnnouncementSeverity;
  active?: boolean;
}

export interface VisibleAnnouncement {
  announcement: Announcement;
  inherited: boolean;
  dismissed: boolean;
}

/** Announcements of an account reach every sub-account; each user dismisses them for themself. */
export class AnnouncementService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async listOwn(principal: Principal, accountId: string): Promise<Announcement[]> {
    const account = await this.accounts.reachable(principal, accountId);
    return this.em().find(Announcement, { account }, { orderBy: { createdAt: 'desc' } });
  }

  async create(principal: Principal, accountId: string, input: AnnouncementInput): Promise<Announcement> {
    const account = await this.accounts.reachable(principal, accountId);
    const announcement = new Announcement();
    announcement.account = account;
    this.apply(announcement, input);
    await this.em().persistAndFlush(announcement);
    return announcement;
  }

  async update(principal: Principal, id: string, input: AnnouncementInput): Promise<Announcement> {
    const announcement = await this.reachable(principal, id);
    this.apply(announcement, input);
    await this.em().flush();
    return announcement;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.em().removeAndFlush(await this.reachable(principal, id));
  }

  /** What the signed-in user sees: active announcements of their account and its ancestors. */
  async visibleTo(userId: string, account: Account): Promise<VisibleAnnouncement[]> {
    const rows = await this.em().find(
      Announcement,
      { account: { $in: account.path }, active: true },
      { orderBy: { createdAt: 'desc' } },
    );
    const states = await this.em().find(AnnouncementState, {
      user: userId,
      announcement: { $in: rows.map((r) => r.id) },
    });
    return rows.map((announcement) => ({
      announcement,
      inherited: announcement.account.id !== account.id,
      dismissed: states.some((s) => s.announcement.id === announcement.id && s.dismissed),
    }));
  }

  /**
   * Dismisses or restores an announcement for one user. Inherited announcements have no state
   * row until the first change, so the row is created here rather than reported missing.
   */
  async setState(principal: Principal, id: string, dismissed: boolean): Promise<VisibleAnnouncement> {
    if (!principal.userId) throw errors.forbidden('USER_REQUIRED', 'Announcements are dismissed by users');
    const user = await this.em().findOneOrFail(User, { id: principal.userId }, { populate: ['account'] });
    const visible = (await this.visibleTo(user.id, user.account)).find((v) => v.announcement.id === id);
    if (!visible) throw errors.notFound('Announcement', id);
    await this.em()
      .getConnection()
      .execute(
        `INSERT INTO announcement_states (id, announcement_id, user_id, dismissed, updated_at)
         VALUES (gen_random_uuid(), ?, ?, ?, now())
         ON CONFLICT (announcement_id, user_id) DO UPDATE SET dismissed = excluded.dismissed, updated_at = now()`,
        [id, user.id, dismissed],
      );
    return { ...visible, dismissed };
  }

  private async reachable(principal: Principal, id: string): Promise<Announcement> {
    const announcement = await this.em().findOne(Announcement, { id }, { populate: ['account'] });
    if (!announcement) throw errors.notFound('Announcement', id);
    await this.accounts.reachable(principal, announcement.account.id).catch(() => {
      throw errors.notFound('Announcement', id);
    });
    return announcement;
  }

  private apply(announcement: Announcement, input: AnnouncementInput): void {
    if (input.title !== undefined) announcement.title = input.title;
    if (input.message !== undefined) announcement.message = input.message;
    if (input.severity !== undefined) announcement.severity = input.severity;
    if (input.active !== undefined) announcement.active = input.active;
    if (!announcement.title?.trim())
      throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
    announcement.message ??= '';
  }
}
