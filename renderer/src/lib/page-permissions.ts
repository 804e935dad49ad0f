import { expandPermissions, grants } from '../../../server/src/roles/permissions';

/**
 * The permission a console page needs, by path prefix (the longest prefix on a segment boundary
 * wins; `/devices/:id` needs what `/devices` needs). These are the read permissions of the list
 * endpoint each page loads first, so a page the navigation shows never opens on a 403. Paths
 * without an entry (home, security) are open to every signed-in user.
 */
export const PAGE_PERMISSIONS: Record<string, string> = {
  '/devices': 'VirtualDevice.read',
  '/connectors': 'connector.read',
  '/gateways': 'gateway.read',
  '/drivers': 'deviceDriver.read',
  '/templates': 'deviceTemplate.read',
  '/twins': 'digitalTwin.read',
  '/map': 'digitalTwin.read',
  '/accounts': 'account.read',
  '/access': 'user.read',
  '/access/roles': 'role.read',
  '/access/api-keys': 'apiKey.read',
  '/dashboards': 'dashboard.read',
  '/rules': 'rule.read',
  '/alarms': 'alarmLog.read',
  '/alarms/groups': 'smartGroup.read',
  '/alarms/reports': 'alarmReport.read',
  '/flows': 'integrationFlow.read',
  '/flows/filters': 'filter.read',
  '/flows/transformers': 'transformer.read',
  '/exports': 'exportPlan.read',
};

/** The permission `path` needs, or null when every signed-in user may open it. */
export function requiredPermission(path: string): string | null {
  let best: string | null = null;
  for (const prefix of Object.keys(PAGE_PERMISSIONS)) {
    const matches = path === prefix || path.startsWith(`${prefix}/`);
    if (matches && (best === null || prefix.length > best.length)) best = prefix;
  }
  return best === null ? null : PAGE_PERMISSIONS[best]!;
}

/**
 * What a signed-in user may open, from the permissions their roles hold. The expansion (manage
 * implies read, all.read, all.manage, Integration.manage …) is the server's own code, so the
 * console and the API never disagree.
 */
export class PageAccess {
  private readonly granted: ReadonlySet<string>;

  constructor(held: readonly string[]) {
    this.granted = expandPermissions(held);
  }

  has(permission: string): boolean {
    return grants(this.granted, permission);
  }

  canOpen(path: string): boolean {
    const required = requiredPermission(path);
    return required === null || this.has(required);
  }

  /** The first of `paths` the user may open (a section's pages, its main page first), or null. */
  firstOpen(paths: readonly string[]): string | null {
    return paths.find((path) => this.canOpen(path)) ?? null;
  }
}
