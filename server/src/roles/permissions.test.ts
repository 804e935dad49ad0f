import { describe, expect, it } from 'vitest';
import { BUILT_IN_ROLES, expandPermissions, grants, PERMISSIONS } from './permissions.js';

describe('permission expansion', () => {
  it('grants the read permission with every manage permission', () => {
    for (const manage of PERMISSIONS.filter((p) => p.endsWith('.manage') && p !== 'all.manage')) {
      const read = manage.replace(/\.manage$/, '.read');
      expect(grants(expandPermissions([manage]), read), manage).toBe(true);
    }
  });

  it('lets whoever manages connectors, directly or through Integration.manage, read them and their kinds', () => {
    for (const held of [['connector.manage'], ['Integration.manage'], ['all.manage']]) {
      const granted = expandPermissions(held);
      expect(grants(granted, 'connector.manage'), held[0]).toBe(true);
      expect(grants(granted, 'connector.read'), held[0]).toBe(true);
    }
    expect(grants(expandPermissions(['connector.read']), 'connector.manage')).toBe(false);
  });

  it('gives no built-in role a manage permission without its read permission', () => {
    for (const role of BUILT_IN_ROLES) {
      const granted = expandPermissions(role.permissions);
      for (const p of granted) {
        if (p.endsWith('.manage'))
          expect(grants(granted, p.replace(/\.manage$/, '.read')), role.name).toBe(true);
      }
    }
  });
});
