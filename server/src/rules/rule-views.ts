import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';
import type { Rule } from './rule.entity.js';
import type { RuleRunResult } from './rule.types.js';

/** A rule as one reader sees it. */
export interface RuleView {
  rule: Rule;
  lastRun: RuleRunResult | null;
}

/**
 * The rules as `reader` sees them. A reader only gets rules whose recorded scopes it has (so their
 * runs concerned twins it saw), but a twin can have moved out of its view since: a last run about
 * a twin the reader does not see now keeps only when it ran and which commands succeeded.
 */
export async function ruleViews(em: EntityManager, reader: Principal, rules: Rule[]): Promise<RuleView[]> {
  const twinIds = [...new Set(rules.flatMap((r) => (r.lastRun?.twinId ? [r.lastRun.twinId] : [])))];
  const hidden = await hiddenTwins(em, reader, twinIds);
  return rules.map((rule) => ({ rule, lastRun: maskRun(rule.lastRun, hidden) }));
}

function maskRun(run: RuleRunResult | null, hidden: ReadonlySet<string>): RuleRunResult | null {
  if (!run?.twinId || !hidden.has(run.twinId)) return run;
  return {
    at: run.at,
    trigger: run.trigger,
    twinId: null,
    commands: run.commands.map(({ type, ok }) => ({ type, ok })),
  };
}

async function hiddenTwins(em: EntityManager, reader: Principal, twinIds: string[]): Promise<Set<string>> {
  if (reader.permissionScopeIds === null || twinIds.length === 0) return new Set();
  const scope = visibleTwinSql(reader, 't');
  const rows = await em.execute<Array<{ id: string }>>(
    `SELECT t.id FROM digital_twins t WHERE t.id IN (?) AND (${scope.sql})`,
    [twinIds, ...scope.params],
  );
  const visible = new Set(rows.map((r) => r.id));
  return new Set(twinIds.filter((id) => !visible.has(id)));
}
