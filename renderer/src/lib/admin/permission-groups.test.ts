import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../../../server/src/roles/permissions';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import { groupPermissions, holds, permissionTexts } from './permission-groups';

describe('groupPermissions', () => {
  it('pairs read and manage of one resource across spellings and sorts rows into areas', () => {
    const groups = groupPermissions([
      'all.manage',
      'all.read',
      'virtualDevice.manage',
      'VirtualDevice.read',
      'UserManagement.create',
      'user.read',
      'user.manage',
      'brandNew.read',
    ]);
    expect(groups.map((g) => g.id)).toEqual(['general', 'identity', 'devices', 'other']);
    expect(groups[2]!.rows).toEqual([
      { resource: 'virtualdevice', manage: 'virtualDevice.manage', read: 'VirtualDevice.read' },
    ]);
    expect(groups[1]!.rows.map((r) => r.resource)).toEqual(['user', 'usermanagement']);
    expect(groups[1]!.rows[1]).toEqual({ resource: 'usermanagement', create: 'UserManagement.create' });
    expect(groups[3]!.rows).toEqual([{ resource: 'brandnew', read: 'brandNew.read' }]);
  });

  it('compares permission names without case', () => {
    expect(holds(['digitalTwin.manage'], 'digitaltwin.MANAGE')).toBe(true);
    expect(holds(['digitalTwin.read'], 'digitalTwin.manage')).toBe(false);
    expect(holds([], undefined)).toBe(false);
  });
});

describe('permissionTexts', () => {
  const t = {
    resources: { virtualdevice: 'Devices', alarmlog: 'Alarms', usermanagement: 'User creation' },
    read: 'Read',
    manage: 'Manage',
    create: 'Create',
  };

  it('names each resource once with its stronger action, the raw names kept for a tooltip', () => {
    expect(
      permissionTexts(
        ['VirtualDevice.read', 'virtualDevice.manage', 'alarmLog.read', 'UserManagement.create'],
        t,
      ),
    ).toEqual([
      { text: 'User creation: Create', name: 'UserManagement.create' },
      { text: 'Devices: Manage', name: 'virtualDevice.manage' },
      { text: 'Alarms: Read', name: 'alarmLog.read' },
    ]);
  });

  it('shows an unknown resource by its own name', () => {
    expect(permissionTexts(['brandNew.read'], t)).toEqual([
      { text: 'brandnew: Read', name: 'brandNew.read' },
    ]);
  });
});

describe('permission labels', () => {
  it('name every permission the server knows in English and German and place it in an area', () => {
    const resources = [
      ...new Set(PERMISSIONS.map((name) => name.slice(0, name.lastIndexOf('.')).toLowerCase())),
    ];
    for (const labels of [en.admin.permissions.resources, de.admin.permissions.resources] as Record<
      string,
      string
    >[]) {
      expect(resources.filter((resource) => !labels[resource])).toEqual([]);
    }
    const other = groupPermissions(PERMISSIONS).find((group) => group.id === 'other');
    expect(other?.rows.map((row) => row.resource) ?? []).toEqual([]);
  });
});
