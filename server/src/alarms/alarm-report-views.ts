import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';
import type { AlarmReport, AlarmReportResult } from './smart-group.entity.js';

/** An alarm report as one reader sees it. */
export interface AlarmReportView {
  report: AlarmReport;
  lastResult: AlarmReportResult | null;
}

/**
 * The reports as `reader` sees them. A reader only gets reports whose recorded scopes it has, so
 * a run listed members it saw then; a member that has left its view since is left out of
 * `inAlarm` (the `members` count stays: it names nothing).
 */
export async function alarmReportViews(
  em: EntityManager,
  reader: Principal,
  reports: AlarmReport[],
): Promise<AlarmReportView[]> {
  if (reader.permissionScopeIds === null)
    return reports.map((report) => ({ report, lastResult: report.lastResult }));
  const ids = { device: new Set<string>(), twin: new Set<string>() };
  for (const r of reports) for (const m of r.lastResult?.inAlarm ?? []) ids[r.lastResult!.target].add(m.id);
  const visible = new Set([
    ...(await visibleIds(
      em,
      'virtual_devices d',
      scopeFilter(reader).sql('d.permission_scope_id'),
      ids.device,
    )),
    ...(await visibleIds(em, 'digital_twins t', visibleTwinSql(reader, 't'), ids.twin)),
  ]);
  return reports.map((report) => {
    const result = report.lastResult;
    if (!result) return { report, lastResult: null };
    return { report, lastResult: { ...result, inAlarm: result.inAlarm.filter((m) => visible.has(m.id)) } };
  });
}

async function visibleIds(
  em: EntityManager,
  table: string,
  condition: { sql: string; params: unknown[] },
  ids: ReadonlySet<string>,
): Promise<string[]> {
  if (ids.size === 0) return [];
  const alias = table.split(' ')[1]!;
  const rows = await em.execute<Array<{ id: string }>>(
    `SELECT ${alias}.id FROM ${table} WHERE ${alias}.id IN (?) AND (${condition.sql})`,
    [[...ids], ...condition.params],
  );
  return rows.map((r) => r.id);
}
