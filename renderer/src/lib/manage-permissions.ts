import type { PageAccess } from './page-permissions';

/**
 * The permission the server requires to create, change or delete things on each console page,
 * read from the `permission` of each area's POST/PATCH/DELETE routes. Pages hide their write
 * buttons without it, so a user never sees an action that could only end in a 403.
 */
export const MANAGE_PERMISSIONS = {
  devices: 'virtualDevice.manage',
  connectors: 'connector.manage',
  gateways: 'gateway.manage',
  drivers: 'deviceDriver.manage',
  templates: 'deviceTemplate.manage',
  twins: 'digitalTwin.manage',
  /** A twin's states (their settings and values), a permission of its own beside the twin's. */
  states: 'state.manage',
  accounts: 'account.manage',
  users: 'user.manage',
  /** Inviting (creating) users is a permission of its own beside changing them. */
  invitations: 'UserManagement.create',
  roles: 'role.manage',
  apiKeys: 'apiKey.manage',
  dashboards: 'dashboard.manage',
  rules: 'rule.manage',
  alarms: 'alarmLog.manage',
  smartGroups: 'smartGroup.manage',
  alarmReports: 'alarmReport.manage',
  flows: 'integrationFlow.manage',
  filters: 'filter.manage',
  transformers: 'transformer.manage',
  exports: 'exportPlan.manage',
} as const;

export type ManagedArea = keyof typeof MANAGE_PERMISSIONS;

/** Whether `access` may change things in `area` (manage implies itself through the server's expansion). */
export function canManage(access: PageAccess, area: ManagedArea): boolean {
  return access.has(MANAGE_PERMISSIONS[area]);
}
