/**
 * The permission catalogue. Names the spec writes are kept exactly (`virtualDevice.manage`,
 * `VirtualDevice.read`, `IotHub.manage`, `Integration.manage`, `UserManagement.create`); the rest follow
 * `<resource>.read` / `<resource>.manage`. Comparison is case-insensitive.
 */

const RESOURCES = [
  'account',
  'announcement',
  'user',
  'role',
  'apiKey',
  'permissionScope',
  'deviceTemplate',
  'deviceDriver',
  'connector',
  'digitalTwin',
  'state',
  'timeseries',
  'dashboard',
  'rule',
  'alarmLog',
  'alarmReport',
  'connectorMonitoring',
  'integrationFlow',
  'filter',
  'transformer',
  'exportPlan',
  'gateway',
  'job',
  'smartGroup',
  'sitePlan',
] as const;

export const PERMISSIONS: readonly string[] = [
  'all.manage',
  'all.read',
  'virtualDevice.manage',
  'VirtualDevice.read',
  'Integration.manage',
  'IotHub.manage',
  'IotHub.read',
  'UserManagement.create',
  // Read only: the audit log is written by the server, never changed through the API.
  'auditEvent.read',
  // Who may become which user through federated login; account.manage does not imply it.
  'identityProvider.manage',
  ...RESOURCES.flatMap((r) => [`${r}.read`, `${r}.manage`]),
];

const CANONICAL = new Map(PERMISSIONS.map((p) => [p.toLowerCase(), p]));

/** What holding a permission also grants, besides `X.manage` → `X.read`. */
const IMPLIES: Record<string, string[]> = {
  'integration.manage': ['connector.manage', 'integrationflow.manage', 'filter.manage', 'transformer.manage'],
  'iothub.manage': ['iothub.read'],
  'user.manage': ['usermanagement.create'],
  // Site plans belong to the twins map: who manages or reads twins does so with their plans.
  'digitaltwin.manage': ['state.manage', 'timeseries.read', 'siteplan.manage'],
  'digitaltwin.read': ['state.read', 'timeseries.read', 'siteplan.read'],
};

export const canonicalPermission = (name: string): string | undefined => CANONICAL.get(name.toLowerCase());

/** Expands held permissions into every permission they grant (lower-cased). */
export function expandPermissions(held: Iterable<string>): Set<string> {
  const granted = new Set<string>();
  const queue = [...held].map((p) => p.toLowerCase());
  while (queue.length > 0) {
    const p = queue.pop()!;
    if (granted.has(p)) continue;
    granted.add(p);
    if (p.endsWith('.manage')) queue.push(p.replace(/\.manage$/, '.read'));
    queue.push(...(IMPLIES[p] ?? []));
  }
  return granted;
}

/** Whether an expanded permission set grants `required`. */
export function grants(granted: ReadonlySet<string>, required: string): boolean {
  const r = required.toLowerCase();
  if (granted.has('all.manage') || granted.has(r)) return true;
  return r.endsWith('.read') && granted.has('all.read');
}

/**
 * Permissions that count only when held (directly, through all.manage or through IotHub.manage),
 * never through all.read: the hub API accepts only keys holding them (spec 3.6.4), so handing one
 * out is a grant of hub access that a reader does not have.
 */
export const HUB_ONLY_PERMISSIONS = ['IotHub.manage', 'IotHub.read'];

/** The hub API accepts only keys holding one of these (spec 3.6.4). */
export const HUB_PERMISSIONS = [...HUB_ONLY_PERMISSIONS, 'all.manage'];

const HUB_ONLY = new Set(HUB_ONLY_PERMISSIONS.map((p) => p.toLowerCase()));

/**
 * Whether the holder of an expanded permission set may hand `permission` out (to a role, a key or
 * a user): like `grants()`, except that all.read does not cover the hub permissions.
 */
export function mayGrant(granted: ReadonlySet<string>, permission: string): boolean {
  const p = permission.toLowerCase();
  if (HUB_ONLY.has(p)) return granted.has('all.manage') || granted.has(p);
  return grants(granted, p);
}

export interface BuiltInRole {
  name: string;
  description: string;
  permissions: string[];
}

export const BUILT_IN_ROLES: BuiltInRole[] = [
  {
    name: 'Administrator',
    description: 'Everything in the account and its sub-accounts.',
    permissions: ['all.manage'],
  },
  { name: 'AccountReader', description: 'Reads everything, changes nothing.', permissions: ['all.read'] },
  {
    name: 'Digital Twin Manager',
    description: 'Manages digital twins, their states, rules and dashboards; reads devices.',
    permissions: [
      'digitalTwin.manage',
      'dashboard.manage',
      'rule.manage',
      'alarmLog.read',
      'VirtualDevice.read',
      'deviceTemplate.read',
      'connector.read',
    ],
  },
  {
    name: 'User Manager',
    description: 'Creates and manages users, roles and access areas.',
    permissions: [
      'user.manage',
      'UserManagement.create',
      'role.manage',
      'permissionScope.manage',
      'account.read',
      'auditEvent.read',
    ],
  },
];
