export type ThemeSetting = 'light' | 'dark' | 'system';
/** Accent palettes of color-themes.css; blue is app.css's default. */
export const COLOR_THEMES = ['blue', 'teal', 'violet', 'amber', 'green'] as const;
export type ColorTheme = (typeof COLOR_THEMES)[number];
const STORAGE_KEY = 'stellwerk.theme';

const isSetting = (value: unknown): value is ThemeSetting =>
  value === 'light' || value === 'dark' || value === 'system';

/**
 * Light or dark: the user's own choice (the toggle, kept in localStorage) wins; without one the
 * account's `uiSettings.systemUiTheme` decides; `system` follows the operating system. The colour
 * theme and the fonts are the account's (the server resolves what a sub-account inherits).
 */
class Theme {
  override = $state<ThemeSetting | null>(readOverride());
  account = $state<ThemeSetting>('system');
  colorTheme = $state<ColorTheme>('blue');
  fonts = $state<'console' | 'system'>('console');
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
    const colour = COLOR_THEMES.find((name) => name === uiSettings.colorTheme);
    this.colorTheme = colour ?? 'blue';
    this.fonts = uiSettings.systemFonts === true ? 'system' : 'console';
  }

  /** Sets the page's theme attributes (color-themes.css and app.css read them). */
  apply(root: HTMLElement): void {
    root.dataset.theme = this.resolved;
    root.dataset.colorTheme = this.colorTheme;
    root.dataset.fonts = this.fonts;
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
