import { describe, expect, it } from 'vitest';
import { planQuery } from './query.analyze.js';
import { compileSql, compileStatesSql } from './query.compile-sql.js';
import { stateLevelFilter, timeRange } from './query.split.js';

const now = new Date('2026-01-31T00:00:00Z');
const tenancy = { accountId: '0192d7a4-0000-7000-8000-00000000000a', includeSubAccounts: false };
const TWIN = '0192d7a4-0000-7000-8000-000000000001';

describe('SQL compiler', () => {
  it('binds every literal and names only whitelisted fragments', () => {
    const literals = [
      "O'Brien; DROP TABLE ts_points; --",
      'Nord',
      'pump',
      'site name',
      'Pump%',
      'Europe/Berlin',
    ];
    const plan = planQuery(
      "SELECT bucket(1h, 'Europe/Berlin') AS h, twin.hierarchy, mean(value) " +
        `WHERE twin.title = 'O''Brien; DROP TABLE ts_points; --' AND property."site name" = 'Nord' ` +
        `AND twin.tags CONTAINS 'pump' AND twin UNDER '${TWIN}' AND twin.title LIKE 'Pump%' ` +
        'AND value > 42.5 AND time >= now() - 7d GROUP BY h, twin.hierarchy LIMIT 77 ORDER BY h DESC',
      now,
    );
    const { sql, params } = compileSql(plan, tenancy);
    for (const literal of [...literals, TWIN, '42.5', '77', tenancy.accountId, '2026-01-24'])
      expect(sql).not.toContain(literal);
    expect(params).toEqual(
      expect.arrayContaining([
        ...literals,
        TWIN,
        42.5,
        77,
        tenancy.accountId,
        new Date('2026-01-24T00:00:00Z'),
      ]),
    );
    expect(sql.split('?').length - 1).toBe(params.length);
    expect(sql).toContain('date_bin(');
    expect(sql).toContain('GROUP BY q.k0, q.k1');
    expect(sql).toMatch(/ORDER BY q\.k0 DESC, q\.k1 COLLATE "C" ASC LIMIT \?$/);
    expect(sql).not.toMatch(/;/);
  });

  it('limits twins and states to the account, or to its subtree when asked', () => {
    const plan = planQuery('SELECT value', now);
    expect(compileSql(plan, tenancy).sql).toContain('t.account_id = ?');
    expect(compileSql(plan, tenancy).sql).toContain('s.account_id = ?');
    const subtree = compileSql(plan, { ...tenancy, includeSubAccounts: true });
    expect(subtree.sql).toContain(
      's.account_id IN (SELECT acc.id FROM accounts acc WHERE ?::uuid = ANY(acc.path))',
    );
    expect(subtree.params.filter((p) => p === tenancy.accountId)).toHaveLength(2);
  });

  it('limits twins, and the ancestors named in twin.hierarchy, to the caller’s permission scopes', () => {
    const plan = planQuery('SELECT twin.hierarchy, value', now);
    const scopes = ['0192d7a4-0000-7000-8000-0000000000b1', '0192d7a4-0000-7000-8000-0000000000b2'];
    const restricted = { ...tenancy, permissionScopeIds: scopes };
    const { sql, params } = compileSql(plan, restricted);
    expect(sql).toContain('t.effective_permission_scope_id IN (?)');
    expect(sql).toContain('a.effective_permission_scope_id IN (?)');
    expect(params.filter((p) => Array.isArray(p))).toEqual([scopes, scopes]);
    expect(sql.split('?').length - 1).toBe(params.length);
    expect(compileStatesSql(null, restricted).sql).toContain('t.effective_permission_scope_id IN (?)');
    expect(compileSql(plan, { ...tenancy, permissionScopeIds: [] }).sql).toContain(' AND FALSE');
    for (const open of [tenancy, { ...tenancy, permissionScopeIds: null }])
      expect(compileSql(plan, open).sql).not.toContain('permission_scope');
  });

  it('binds IN lists as one array (knex expands it) and omits GROUP BY for a lone aggregate', () => {
    const { sql, params } = compileSql(
      planQuery("SELECT count(*) WHERE state.key IN ('a', 'b')", now),
      tenancy,
    );
    expect(sql).toContain('s.key IN (?)');
    expect(params).toContainEqual(['a', 'b']);
    expect(sql).not.toContain('GROUP BY');
  });
});

describe('splitting a filter for the evaluator', () => {
  it('keeps state-level conditions and drops point conditions soundly, even under NOT', () => {
    const plan = planQuery("SELECT value WHERE NOT (state.key = 'a' AND value > 1) OR twin.title = 'x'", now);
    // NOT(key = a AND value > 1) = key != a OR NOT value > 1 → TRUE: every state may qualify.
    expect(stateLevelFilter(plan.filter)).toBeNull();
    const narrow = planQuery("SELECT value WHERE state.key = 'a' AND NOT value > 1", now);
    expect(stateLevelFilter(narrow.filter)).toEqual({
      kind: 'compare',
      target: { kind: 'column', name: 'state.key' },
      op: '=',
      value: 'a',
    });
    expect(compileStatesSql(stateLevelFilter(narrow.filter), tenancy).sql).toContain('s.key = ?');
  });

  it('derives the read range from time conditions', () => {
    const range = (text: string) => timeRange(planQuery(`SELECT value WHERE ${text}`, now).filter);
    const day = Date.parse('2026-01-30T00:00:00Z');
    expect(range('time >= now() - 1d AND time < now()')).toEqual({ from: day, to: now.getTime() });
    expect(range("time <= '2026-01-30'")).toMatchObject({ to: day + 1 });
    expect(range('NOT time < now() - 1d')).toMatchObject({ from: day });
    expect(range("(time >= now() - 1d OR time < '2026-01-01') AND value > 1").from).toBeLessThan(day);
  });
});
