/** `inherit`: the key is left out, so the account takes the nearest ancestor's value (server side). */
export const INHERIT = 'inherit';

export interface Appearance {
  systemUiTheme: string;
  colorTheme: string;
  systemFonts: string;
}

const stored = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'boolean' ? String(value) || INHERIT : INHERIT;

/** The appearance form's fields from an account's own `uiSettings` (not the effective ones). */
export function appearanceOf(uiSettings: Record<string, unknown>, hasParent: boolean): Appearance {
  const form = {
    systemUiTheme: stored(uiSettings.systemUiTheme),
    colorTheme: stored(uiSettings.colorTheme),
    systemFonts: stored(uiSettings.systemFonts),
  };
  // A root account has nothing to inherit from: its defaults are shown as what they are.
  if (!hasParent) {
    if (form.systemUiTheme === INHERIT) form.systemUiTheme = 'system';
    if (form.colorTheme === INHERIT) form.colorTheme = 'blue';
    if (form.systemFonts === INHERIT) form.systemFonts = 'false';
  }
  return form;
}

/**
 * The account's new `uiSettings`: the form's choices over the stored ones, an inherited choice
 * removed; other keys (the basemap, keys other clients keep) stay as they are.
 */
export function withAppearance(
  uiSettings: Record<string, unknown>,
  form: Appearance,
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...uiSettings };
  delete next.systemUiTheme;
  delete next.colorTheme;
  delete next.systemFonts;
  if (form.systemUiTheme !== INHERIT) next.systemUiTheme = form.systemUiTheme;
  if (form.colorTheme !== INHERIT) next.colorTheme = form.colorTheme;
  if (form.systemFonts !== INHERIT) next.systemFonts = form.systemFonts === 'true';
  return next;
}
