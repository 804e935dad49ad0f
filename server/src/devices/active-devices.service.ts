import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { AccountService } from '../accounts/account.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';

export const MAX_ACTIVE_RANGE_DAYS = 366;
const DEFAULT_RANGE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface ActiveDevicesQuery {
  accountId?: string;
  from?: string;
  to?: string;
  includeSubAccounts?: boolean;
}

/**
 * How many devices were active in a time range: a device counts when Stellwerk received a packet
 * from it in [from, to]. `virtual_devices.last_seen` (the newest packet's receive time) answers
 * most of it without touching the packet table: last seen before `from` means inactive, last seen
 * within the range means active. Only a device last seen after `to` needs its stored packets
 * (index packets(connector_id, device_key, id), the same address the packet history uses).
 * Callers have checked VirtualDevice.read; the account must be reachable, the caller's permission
 * scopes apply as in the device list.
 */
export class ActiveDevicesService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly clock: () => Date,
  ) {}

  async count(principal: Principal, query: ActiveDevicesQuery) {
    const account = await this.accounts.actingAccount(principal, query.accountId);
    const includeSubAccounts = query.includeSubAccounts ?? false;
    const to = query.to ? new Date(query.to) : this.clock();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
      throw errors.validation('from and to must be ISO-8601 date-times', [
        { location: 'querystring', path: '/from' },
      ]);
    }
    if (!(from.getTime() < to.getTime())) {
      throw errors.validation('from must be before to', [{ location: 'querystring', path: '/from' }]);
    }
    if (to.getTime() - from.getTime() > MAX_ACTIVE_RANGE_DAYS * DAY_MS) {
      throw errors.validation(`The range may cover at most ${MAX_ACTIVE_RANGE_DAYS} days`, [
        { location: 'querystring', path: '/to' },
      ]);
    }
    const accountSql = includeSubAccounts
      ? 'd.account_id IN (SELECT a.id FROM accounts a WHERE ?::uuid = ANY(a.path))'
      : 'd.account_id = ?';
    const scope = scopeFilter(principal).sql('d.permission_scope_id');
    const rows = await this.em().execute<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM virtual_devices d
        WHERE ${accountSql} AND ${scope.sql} AND d.last_seen >= ?
          AND (d.last_seen <= ? OR EXISTS (
                SELECT 1 FROM packets p
                 WHERE p.connector_id = d.connector_id AND p.device_key = d.device_id
                   AND p.received_at >= ? AND p.received_at <= ?))`,
      [account.id, ...scope.params, from, to, from, to],
    );
    return {
      count: Number(rows[0]?.n ?? 0),
      from: from.toISOString(),
      to: to.toISOString(),
      accountId: account.id,
      includeSubAccounts,
    };
  }
}
