import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/account.entity.js';
import type { Principal } from '../auth/principal.js';
import { ALARM_SEVERITIES, type AlarmSeverity } from './alarm-log.entity.js';
import { visibleAlarmSql } from './alarm-visibility.js';

/**
 * Open entries (status `open`, as the navigation badge counts them) of the account that the
 * principal sees within its permission scopes, per severity; every severity is answered. The
 * caller has checked alarmLog.read and reached the account.
 */
export async function openAlarmsBySeverity(
  em: EntityManager,
  principal: Principal,
  account: Account,
): Promise<Record<AlarmSeverity, number>> {
  const visible = visibleAlarmSql(principal, 'a');
  const rows = await em.getConnection().execute<Array<{ severity: AlarmSeverity; n: number }>>(
    `SELECT a.severity, count(*)::int AS n FROM alarm_logs a
      WHERE a.account_id = ? AND a.status = 'open' AND (${visible.sql})
      GROUP BY a.severity`,
    [account.id, ...visible.params],
  );
  const counts = Object.fromEntries(ALARM_SEVERITIES.map((s) => [s, 0])) as Record<AlarmSeverity, number>;
  for (const row of rows) if (row.severity in counts) counts[row.severity] = row.n;
  return counts;
}
