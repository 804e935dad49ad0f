import { describe, expect, it } from 'vitest';
import { errors } from '../platform/errors.js';
import { scopeFilter } from './scope-filter.js';

const notFound = () => errors.notFound('Twin', 't1');

describe('scopeFilter', () => {
  it('does not restrict principals without scopes (users without scopes, API keys)', () => {
    const f = scopeFilter({ permissionScopeIds: null });
    expect(f.restricted).toBe(false);
    expect(f.where('permissionScope')).toEqual({});
    expect(f.sql('t.permission_scope_id')).toEqual({ sql: 'TRUE', params: [] });
    expect(f.allows(null)).toBe(true);
    expect(f.allows('s9')).toBe(true);
    expect(() => f.assertVisible(undefined, notFound)).not.toThrow();
  });

  it('limits restricted principals to their scopes and hides objects without a scope', () => {
    const f = scopeFilter({ permissionScopeIds: ['s1', 's2'] });
    expect(f.restricted).toBe(true);
    expect(f.scopeIds).toEqual(['s1', 's2']);
    expect(f.where('permissionScope')).toEqual({ permissionScope: { $in: ['s1', 's2'] } });
    expect(f.sql('t.permission_scope_id')).toEqual({
      sql: 't.permission_scope_id IN (?)',
      params: [['s1', 's2']],
    });
    expect(f.allows('s2')).toBe(true);
    expect(f.allows('s3')).toBe(false);
    expect(f.allows(null)).toBe(false);
    expect(() => f.assertVisible('s3', notFound)).toThrow(
      expect.objectContaining({ code: 'NOT_FOUND', status: 404 }),
    );
    expect(() => f.assertVisible('s1', notFound)).not.toThrow();
  });
});
