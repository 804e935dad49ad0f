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
    path: '/security',
    label: (t) => t.nav.security,
    icon: 'M12 2 4 5v6c0 5 3.4 9.4 8 11 4.6-1.6 8-6 8-11V5z',
  },
];
