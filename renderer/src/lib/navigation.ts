import type { Messages } from '../i18n/en';
import type { PageAccess } from './page-permissions';

/** The sidebar's entries, in order; a new page adds its line here and its route in App.svelte. */
export interface NavItem {
  path: string;
  label: (t: Messages) => string;
  icon: string;
  /** A live count shown next to the label (lib/rules/open-alarms.svelte.ts for `openAlarms`). */
  badge?: 'openAlarms';
  /** The section's other pages: the entry links to the first one the user may open. */
  also?: string[];
}

/** An entry the signed-in user may follow, linked to the first page of it they may open. */
export interface VisibleNavItem extends NavItem {
  href: string;
}

/** The entries `access` allows, in order (lib/page-permissions.ts says which page needs what). */
export function visibleNavigation(items: readonly NavItem[], access: PageAccess): VisibleNavItem[] {
  return items.flatMap((item) => {
    const href = access.firstOpen([item.path, ...(item.also ?? [])]);
    return href === null ? [] : [{ ...item, href }];
  });
}

export const NAVIGATION: NavItem[] = [
  { path: '/', label: (t) => t.nav.home, icon: 'M3 10.5 12 3l9 7.5V21h-6v-6H9v6H3z' },
  {
    path: '/devices',
    label: (t) => t.devices.nav.devices,
    icon: 'M7 3h10a2 2 0 0 1 2 2v14a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zM9 7h6M9 11h6M12 17h.01',
  },
  {
    path: '/connectors',
    label: (t) => t.devices.nav.connectors,
    icon: 'M9 3v5M15 3v5M6 8h12v3a6 6 0 0 1-12 0zM12 17v4',
  },
  {
    path: '/gateways',
    label: (t) => t.gateways.nav,
    icon: 'M12 20v-8M8.5 8.5a5 5 0 0 1 7 0M5.6 5.6a9 9 0 0 1 12.8 0M9 20h6',
  },
  {
    path: '/drivers',
    label: (t) => t.drivers.nav.drivers,
    icon: 'M8 9h8M8 13h5M5 4h14a1 1 0 0 1 1 1v14a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1zM16 13l2 2-2 2',
  },
  {
    path: '/templates',
    label: (t) => t.drivers.nav.templates,
    icon: 'M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM16.5 13v7M13 16.5h7',
  },
  {
    path: '/exports',
    label: (t) => t.exports.nav,
    icon: 'M12 3v12M7 10l5 5 5-5M5 21h14',
  },
  {
    path: '/security',
    label: (t) => t.nav.security,
    icon: 'M12 2 4 5v6c0 5 3.4 9.4 8 11 4.6-1.6 8-6 8-11V5z',
  },
  {
    path: '/twins',
    label: (t) => t.twins.nav,
    icon: 'M12 3 3 7.5 12 12l9-4.5L12 3ZM3 12l9 4.5 9-4.5M3 16.5 12 21l9-4.5',
  },
  {
    path: '/map',
    label: (t) => t.twins.navMap,
    icon: 'M9 4 3 6v14l6-2 6 2 6-2V4l-6 2-6-2Zm0 0v14m6-12v14',
  },
  {
    path: '/accounts',
    label: (t) => t.admin.nav.accounts,
    icon: 'M3 21h18M5 21V7l7-4 7 4v14M9 21v-4h6v4M9 10h.01M15 10h.01M9 14h.01M15 14h.01',
  },
  {
    path: '/access',
    also: ['/access/roles', '/access/api-keys'],
    label: (t) => t.admin.nav.access,
    icon: 'M16 21v-2a4 4 0 0 0-4-4H6a4 4 0 0 0-4 4v2M9 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM22 21v-2a4 4 0 0 0-3-3.9M16 3.1a4 4 0 0 1 0 7.8',
  },
  {
    path: '/dashboards',
    label: (t) => t.dashboards.nav,
    icon: 'M4 4h7v7H4zM13 4h7v4h-7zM13 10h7v10h-7zM4 13h7v7H4z',
  },
  {
    path: '/rules',
    label: (t) => t.rules.nav.rules,
    icon: 'M4 6h9M4 12h6M4 18h9M16 4l4 4-4 4M20 8h-6',
  },
  {
    path: '/alarms',
    label: (t) => t.rules.nav.alarms,
    icon: 'M6 16V11a6 6 0 0 1 12 0v5l2 2H4zM10 21h4',
    badge: 'openAlarms',
    also: ['/alarms/groups', '/alarms/reports'],
  },
  {
    path: '/flows',
    also: ['/flows/filters', '/flows/transformers'],
    label: (t) => t.flows.nav,
    icon: 'M3 5h6v4H3zM15 15h6v4h-6zM9 7h3a2 2 0 0 1 2 2v6a2 2 0 0 0 1 1.7',
  },
];
