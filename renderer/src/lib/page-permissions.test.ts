import { describe, expect, it } from 'vitest';
import { NAVIGATION, visibleNavigation } from './navigation';
import { PageAccess, requiredPermission } from './page-permissions';

const pathsShown = (held: string[]) => visibleNavigation(NAVIGATION, new PageAccess(held)).map((i) => i.href);

describe('page permissions', () => {
  it('finds the permission of a page by its longest path prefix, on segment boundaries', () => {
    expect(requiredPermission('/devices')).toBe('VirtualDevice.read');
    expect(requiredPermission('/devices/0d7c')).toBe('VirtualDevice.read');
    expect(requiredPermission('/access/roles')).toBe('role.read');
    expect(requiredPermission('/flows/filters/9')).toBe('filter.read');
    expect(requiredPermission('/mapping')).toBeNull();
    expect(requiredPermission('/')).toBeNull();
    expect(requiredPermission('/security')).toBeNull();
  });

  it('shows a reader of dashboards only home, security and dashboards', () => {
    expect(pathsShown(['dashboard.read'])).toEqual(['/', '/security', '/dashboards']);
  });

  it('counts manage as read and follows the implied permissions of the server', () => {
    const shown = pathsShown(['digitalTwin.manage', 'Integration.manage']);
    expect(shown).toContain('/twins');
    expect(shown).toContain('/map');
    expect(shown).toContain('/connectors');
    expect(shown).toContain('/flows');
    expect(shown).not.toContain('/devices');
    expect(shown).not.toContain('/accounts');
  });

  it('shows every page to all.read and all.manage, whatever the case of the names', () => {
    const all = NAVIGATION.map((i) => i.path);
    expect(pathsShown(['ALL.READ'])).toEqual(all);
    expect(pathsShown(['all.manage'])).toEqual(all);
  });

  it('links a section to the first of its pages the user may open', () => {
    expect(pathsShown(['role.read'])).toContain('/access/roles');
    expect(pathsShown(['smartGroup.manage'])).toContain('/alarms/groups');
    expect(pathsShown(['transformer.read'])).toContain('/flows/transformers');
    expect(pathsShown(['user.read', 'role.read'])).toContain('/access');
  });

  it('refuses a page opened by address without its permission', () => {
    const access = new PageAccess(['VirtualDevice.read']);
    expect(access.canOpen('/devices/abc')).toBe(true);
    expect(access.canOpen('/rules/abc')).toBe(false);
    expect(access.canOpen('/access/api-keys')).toBe(false);
    expect(access.canOpen('/')).toBe(true);
  });
});
