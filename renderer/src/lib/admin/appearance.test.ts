import { describe, expect, it } from 'vitest';
import { appearanceOf, INHERIT, withAppearance } from './appearance';

describe('account appearance form', () => {
  it('shows unset keys of a sub-account as inherited and a root account’s defaults as they are', () => {
    expect(appearanceOf({ colorTheme: 'teal' }, true)).toEqual({
      systemUiTheme: INHERIT,
      colorTheme: 'teal',
      systemFonts: INHERIT,
    });
    expect(appearanceOf({ systemFonts: false }, false)).toEqual({
      systemUiTheme: 'system',
      colorTheme: 'blue',
      systemFonts: 'false',
    });
  });

  it('drops inherited keys, keeps explicit false and leaves other keys alone', () => {
    const stored = {
      systemUiTheme: 'dark',
      colorTheme: 'violet',
      mapStyleUrl: '/maps/site.pmtiles',
      custom: 1,
    };
    expect(
      withAppearance(stored, { systemUiTheme: INHERIT, colorTheme: 'amber', systemFonts: 'false' }),
    ).toEqual({ colorTheme: 'amber', systemFonts: false, mapStyleUrl: '/maps/site.pmtiles', custom: 1 });
    expect(withAppearance({}, { systemUiTheme: 'dark', colorTheme: INHERIT, systemFonts: 'true' })).toEqual({
      systemUiTheme: 'dark',
      systemFonts: true,
    });
  });
});
