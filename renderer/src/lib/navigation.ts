import type { Messages } from '../i18n/en';

/** The sidebar's entries, in order; a new page adds its line here and its route in App.svelte. */
export interface NavItem {
  path: string;
  label: (t: Messages) => string;
  icon: string;
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
];
