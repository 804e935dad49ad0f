export type ThemeSetting = 'light' | 'dark' | 'system';
const STORAGE_KEY = 'stellwerk.theme';

const isSetting = (value: unknown): value is ThemeSetting =>
  value === 'light' || value === 'dark' || value === 'system';

/**
 * Light or dark: the user's own choice (the toggle, kept in localStorage) wins; without one the
 * account's `uiSettings.systemUiTheme` decides; `system` follows the operating system.
 */
class Theme {
  override = $state<ThemeSetting | null>(readOverride());
  account = $state<ThemeSetting>('system');
  private systemDark = $state(window.matchMedia('(prefers-color-scheme: dark)').matches);

  constructor() {
    window
      .matchMedia('(prefers-color-scheme: dark)')
      .addEventListener('change', (event) => (this.systemDark = event.matches));
  }

  get resolved(): 'light' | 'dark' {
    const setting = this.override ?? this.account;
    if (setting === 'system') return this.systemDark ? 'dark' : 'light';
    return setting;
  }

  followAccount(uiSettings: Record<string, unknown>): void {
    this.account = isSetting(uiSettings.systemUiTheme) ? uiSettings.systemUiTheme : 'system';
  }

  toggle(): void {
    this.override = this.resolved === 'dark' ? 'light' : 'dark';
    localStorage.setItem(STORAGE_KEY, this.override);
  }
}

function readOverride(): ThemeSetting | null {
  const stored = localStorage.getItem(STORAGE_KEY);
  return isSetting(stored) ? stored : null;
}

export const theme = new Theme();
