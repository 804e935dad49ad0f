import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';

/**
 * Which alarm entries a principal restricted to permission scopes sees (docs/alarms.md,
 * "Permission scopes"). An entry is about the object it references, so that object decides:
 *
 * - a twin (`digitalTwin`): the twin's effective scope now, like every twin read; an entry about a
 *   twin that no longer exists is seen by unrestricted readers only;
 * - a device (`virtualDevice`): the device's scope, likewise;
 * - a LoRaWAN gateway (`gateway`, connector monitoring): the gateway's scope, likewise;
 * - a connector, or no reference: not scope-bound (connectors are not), seen by every reader of
 *   the account; producers writing twin or device data always reference that twin or device;
 * - any other reference type: unrestricted readers only, until someone decides otherwise.
 */
export const UNSCOPED_REFERENCE_TYPES = ['connector'] as const;

/** The condition "the alarm entry row `alias` is visible to the principal" for hand-written SQL. */
export function visibleAlarmSql(
  principal: Pick<Principal, 'permissionScopeIds'>,
  alias: string,
): { sql: string; params: unknown[] } {
  const filter = scopeFilter(principal);
  if (!filter.restricted) return { sql: 'TRUE', params: [] };
  const twin = filter.sql('t.effective_permission_scope_id');
  const device = filter.sql('d.permission_scope_id');
  const gateway = filter.sql('g.permission_scope_id');
  return {
    sql: `CASE ${alias}.reference_type
            WHEN 'digitalTwin' THEN EXISTS (SELECT 1 FROM digital_twins t WHERE t.id = ${alias}.reference_id AND ${twin.sql})
            WHEN 'virtualDevice' THEN EXISTS (SELECT 1 FROM virtual_devices d WHERE d.id = ${alias}.reference_id AND ${device.sql})
            WHEN 'gateway' THEN EXISTS (SELECT 1 FROM gateways g WHERE g.id = ${alias}.reference_id AND ${gateway.sql})
            ELSE ${alias}.reference_type IS NULL OR ${alias}.reference_type IN (?)
          END`,
    params: [...twin.params, ...device.params, ...gateway.params, [...UNSCOPED_REFERENCE_TYPES]],
  };
}

/** Whether a reader restricted to `scopes` (null: unrestricted) sees the stored entry `id`. */
export async function entryVisibleWithin(
  em: EntityManager,
  id: string,
  scopes: RecordedScopes,
): Promise<boolean> {
  const visible = visibleAlarmSql({ permissionScopeIds: scopes }, 'a');
  if (visible.sql === 'TRUE') return true;
  const rows = await em.execute<unknown[]>(`SELECT 1 FROM alarm_logs a WHERE a.id = ? AND (${visible.sql})`, [
    id,
    ...visible.params,
  ]);
  return rows.length > 0;
}
