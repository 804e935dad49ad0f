import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/account.entity.js';
import type { Principal } from '../auth/principal.js';
import { HEALTH_STATE_SQL } from './virtual-device.filter.js';
import type { VirtualDeviceService } from './virtual-device.service.js';

export interface HealthCount {
  state: string;
  count: number;
}

/**
 * The account's devices the principal sees (permission scopes apply) by health state as shown,
 * most frequent first. The caller has checked VirtualDevice.read and reached the account.
 */
export async function devicesByHealth(
  em: EntityManager,
  devices: VirtualDeviceService,
  principal: Principal,
  account: Account,
): Promise<HealthCount[]> {
  const where = devices.whereSql(principal, account, { conditions: [] });
  const rows = await em.getConnection().execute<Array<{ state: string; n: number }>>(
    `SELECT ${HEALTH_STATE_SQL('d')} AS state, count(*)::int AS n
       FROM virtual_devices d WHERE ${where.sql}
      GROUP BY 1 ORDER BY 2 DESC, 1`,
    where.params,
  );
  return rows.map((r) => ({ state: r.state, count: r.n }));
}
