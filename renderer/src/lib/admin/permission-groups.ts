/**
 * The permission catalogue (GET /xapi/v1/permissions) arranged for the picker: one row per resource
 * with its read / manage (or create) permission, rows grouped by area. Resources are matched without
 * case, because the spec spells some names both ways (`VirtualDevice.read`, `virtualDevice.manage`).
 */
export type GroupId = 'general' | 'identity' | 'devices' | 'twins' | 'rules' | 'integration' | 'other';

export interface PermissionRow {
  /** Lower-cased resource, the key of its label in the dictionary. */
  resource: string;
  read?: string;
  manage?: string;
  create?: string;
}

export interface PermissionGroup {
  id: GroupId;
  rows: PermissionRow[];
}

const AREAS: Record<Exclude<GroupId, 'other'>, string[]> = {
  general: ['all'],
  identity: [
    'account',
    'announcement',
    'user',
    'usermanagement',
    'role',
    'apikey',
    'permissionscope',
    'identityprovider',
    'auditevent',
  ],
  devices: [
    'connector',
    'virtualdevice',
    'devicedriver',
    'devicetemplate',
    'gateway',
    'connectormonitoring',
    'iothub',
  ],
  twins: ['digitaltwin', 'siteplan', 'state', 'timeseries', 'dashboard', 'smartgroup'],
  rules: ['rule', 'alarmlog', 'alarmreport'],
  integration: ['integration', 'integrationflow', 'filter', 'transformer', 'exportplan', 'job'],
};

export function groupPermissions(catalogue: readonly string[]): PermissionGroup[] {
  const rows = new Map<string, PermissionRow>();
  for (const name of catalogue) {
    const dot = name.lastIndexOf('.');
    if (dot <= 0) continue;
    const resource = name.slice(0, dot).toLowerCase();
    const action = name.slice(dot + 1).toLowerCase();
    const row = rows.get(resource) ?? { resource };
    if (action === 'read' || action === 'manage' || action === 'create') row[action] = name;
    rows.set(resource, row);
  }
  const groups: PermissionGroup[] = [];
  const placed = new Set<string>();
  for (const [id, resources] of Object.entries(AREAS) as [GroupId, string[]][]) {
    const inGroup = resources.map((r) => rows.get(r)).filter((r): r is PermissionRow => !!r);
    inGroup.forEach((r) => placed.add(r.resource));
    if (inGroup.length > 0) groups.push({ id, rows: inGroup });
  }
  const rest = [...rows.values()].filter((r) => !placed.has(r.resource));
  if (rest.length > 0) groups.push({ id: 'other', rows: rest });
  return groups;
}

/** Whether `name` is in `chosen`, ignoring case (the server answers in canonical spelling). */
export const holds = (chosen: readonly string[], name: string | undefined): boolean =>
  !!name && chosen.some((c) => c.toLowerCase() === name.toLowerCase());

/** A resource's label: the dictionary's, else the name itself. */
export const resourceLabel = (labels: Record<string, string>, resource: string): string =>
  labels[resource] ?? resource;

/** The words `permissionTexts` needs: resource labels and the action names. */
export interface PermissionTexts {
  resources: Record<string, string>;
  read: string;
  manage: string;
  create: string;
}

/**
 * What a user holds, readable: one entry per resource, "Devices: Manage", with the stronger action
 * only (manage includes read), in the picker's area order; the raw name stays as `name` for a tooltip.
 */
export function permissionTexts(
  held: readonly string[],
  t: PermissionTexts,
): { text: string; name: string }[] {
  return groupPermissions(held).flatMap((group) =>
    group.rows.map((row) => {
      const actions = [row.manage ? t.manage : row.read ? t.read : null, row.create ? t.create : null];
      const names = [row.manage ?? row.read, row.create].filter((n): n is string => !!n);
      return {
        text: `${resourceLabel(t.resources, row.resource)}: ${actions.filter(Boolean).join(', ')}`,
        name: names.join(', '),
      };
    }),
  );
}
