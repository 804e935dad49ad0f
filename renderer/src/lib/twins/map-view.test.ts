import { describe, expect, it } from 'vitest';
import type { Language } from '../i18n.svelte';
import { routeQuery } from '../route-match';
import { mapProps, mapViewKey, parseMapView, showLanguage } from './map-view';

const view = (query: string) => parseMapView(new URLSearchParams(query));

describe('map view parameters', () => {
  it('default to no zoom lock, no tilt, the page theme and no language', () => {
    expect(view('')).toEqual({ zoomLock: false, pitch: 0, mapStyle: null, language: null });
  });

  it('read zoomlock, pitch, mapstyle and language, clamping and ignoring what they do not know', () => {
    expect(view('zoomlock=TRUE&pitch=40&mapstyle=dark&language=DE')).toEqual({
      zoomLock: true,
      pitch: 40,
      mapStyle: 'dark',
      language: 'de',
    });
    expect(view('zoomlock=no&pitch=200&mapstyle=neon&language=fr')).toEqual({
      zoomLock: false,
      pitch: 85,
      mapStyle: null,
      language: null,
    });
    expect(view('zoomlock&pitch=-5').zoomLock).toBe(true);
    expect(view('pitch=-5').pitch).toBe(0);
    expect(view('pitch=abc').pitch).toBe(0);
  });

  it('come from the query of a console route, after the path in the hash', () => {
    expect(parseMapView(new URLSearchParams(routeQuery('#/twins/map?zoomlock=1&pitch=30')))).toMatchObject({
      zoomLock: true,
      pitch: 30,
    });
    expect(routeQuery('#/twins/map')).toBe('');
    expect(mapProps(view('zoomlock=true&pitch=30&mapstyle=light'))).toEqual({
      zoomLock: true,
      pitch: 30,
      palette: 'light',
    });
    expect(mapViewKey(view('pitch=30'))).not.toBe(mapViewKey(view('pitch=31')));
  });

  it('show the view language while a page is open, then give the user’s back', () => {
    const i18n = {
      language: 'en' as Language,
      use(language: Language) {
        this.language = language;
      },
    };
    const restore = showLanguage(i18n, 'de');
    expect(i18n.language).toBe('de');
    restore?.();
    expect(i18n.language).toBe('en');
    expect(showLanguage(i18n, null)).toBeUndefined();
    expect(showLanguage(i18n, 'en')).toBeUndefined();
    expect(i18n.language).toBe('en');
  });
});
