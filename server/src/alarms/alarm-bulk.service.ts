import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors } from '../platform/errors.js';
import { AlarmLog } from './alarm-log.entity.js';
import { alarmEntryOf, type AlarmLogFilter, type AlarmLogService } from './alarm-log.service.js';

/** Entries one bulk call changes at most; a filter that selects more reports `more: true`. */
export const MAX_BULK_ALARMS = 500;

export type BulkAlarmAction = 'acknowledge' | 'close';

/** Which entries a bulk action is about: listed ids, or what a list filter selects. */
export type BulkAlarmSelection = { ids: string[] } | { filter: AlarmLogFilter };

export interface BulkAlarmResult {
  /** Entries the action changed. */
  changed: string[];
  /** Entries already acknowledged or closed (for acknowledge: closed ones too; they stay closed). */
  unchanged: string[];
  /** Listed ids that are missing, of an account the caller cannot reach, or outside its scopes. */
  notFound: string[];
  /** A filter selected more than MAX_BULK_ALARMS entries: call again for the rest. */
  more: boolean;
}

/**
 * Acknowledging and closing many alarm entries at once. Callers have checked alarmLog.manage.
 * Listed ids are taken only when the caller could read each one alone (its account reachable, the
 * entry visible within its permission scopes); every other id is reported in `notFound`, exactly
 * like a missing one, and left alone, so another tenant's ids neither change nor reveal anything.
 * A filter works like the list's (one account: the caller's or `accountId`). Who and when are
 * recorded on each entry, as with the single actions, and the live push hears of every change.
 */
export class AlarmBulkService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly alarms: AlarmLogService,
    private readonly clock: () => Date,
  ) {}

  async apply(
    principal: Principal,
    action: BulkAlarmAction,
    selection: BulkAlarmSelection,
  ): Promise<BulkAlarmResult> {
    const { entries, notFound, more } = await this.select(principal, selection);
    const now = this.clock();
    const changed: string[] = [];
    const unchanged: string[] = [];
    for (const alarm of entries) {
      if (action === 'acknowledge' && alarm.status === 'open') {
        alarm.status = 'acknowledged';
        alarm.acknowledgedAt = now;
        alarm.acknowledgedBy = principal.id;
        changed.push(alarm.id);
      } else if (action === 'close' && alarm.status !== 'closed') {
        alarm.status = 'closed';
        alarm.closedAt = now;
        alarm.closedBy = principal.id;
        alarm.closeReason = 'manual';
        changed.push(alarm.id);
      } else unchanged.push(alarm.id);
    }
    await this.em().flush();
    const ids = new Set(changed);
    this.alarms.changed(entries.filter((a) => ids.has(a.id)).map(alarmEntryOf));
    return { changed, unchanged, notFound, more };
  }

  private async select(
    principal: Principal,
    selection: BulkAlarmSelection,
  ): Promise<{ entries: AlarmLog[]; notFound: string[]; more: boolean }> {
    if ('ids' in selection) {
      const ids = [...new Set(selection.ids.map((id) => id.toLowerCase()))];
      if (ids.length > MAX_BULK_ALARMS)
        throw errors.validation(`At most ${MAX_BULK_ALARMS} ids per call`, [{ path: '/ids' }]);
      const found = await this.em().find(AlarmLog, { id: { $in: ids } }, { populate: ['account'] });
      const reachable = found.filter((a) => canReach(principal, a.account)).map((a) => a.id);
      const visible = new Set(
        reachable.length === 0
          ? []
          : (
              await this.em().find(AlarmLog, this.alarms.visibleAmong(principal, reachable), {
                fields: ['id'],
              })
            ).map((a) => a.id),
      );
      const entries = found.filter((a) => visible.has(a.id));
      return { entries, notFound: ids.filter((id) => !visible.has(id)), more: false };
    }
    const account = await this.accounts.actingAccount(principal, selection.filter.accountId);
    const entries = await this.em().find(AlarmLog, this.alarms.where(principal, account, selection.filter), {
      orderBy: { createdAt: 'asc', id: 'asc' },
      limit: MAX_BULK_ALARMS + 1,
      populate: ['account'],
    });
    const more = entries.length > MAX_BULK_ALARMS;
    return { entries: entries.slice(0, MAX_BULK_ALARMS), notFound: [], more };
  }
}
