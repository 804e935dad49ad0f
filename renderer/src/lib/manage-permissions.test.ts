import { describe, expect, it } from 'vitest';
import { canManage, MANAGE_PERMISSIONS } from './manage-permissions';
import { PageAccess } from './page-permissions';
import { PERMISSIONS } from '../../../server/src/roles/permissions';

describe('canManage', () => {
  it('names only permissions the server knows', () => {
    for (const permission of Object.values(MANAGE_PERMISSIONS)) expect(PERMISSIONS).toContain(permission);
  });

  it('refuses write actions to a user who may only read an area', () => {
    const reader = new PageAccess(['VirtualDevice.read', 'alarmLog.read']);
    expect(canManage(reader, 'devices')).toBe(false);
    expect(canManage(reader, 'alarms')).toBe(false);
  });

  it('allows write actions with the area manage permission and not elsewhere', () => {
    const deviceManager = new PageAccess(['virtualDevice.manage']);
    expect(canManage(deviceManager, 'devices')).toBe(true);
    expect(canManage(deviceManager, 'connectors')).toBe(false);
  });

  it('allows every area to a holder of all.manage', () => {
    const admin = new PageAccess(['all.manage']);
    for (const area of Object.keys(MANAGE_PERMISSIONS) as (keyof typeof MANAGE_PERMISSIONS)[]) {
      expect(canManage(admin, area)).toBe(true);
    }
  });
});
