import { describe, expect, it } from 'vitest';
import { linkWithOptions, parsePublicLocation } from './public-dashboard.svelte';

const ID = '01a216e5-dd51-70c9-807a-0b6832d3e062';
const at = (search: string, hash = '#key=swd_abc') => ({
  pathname: `/public/dashboards/${ID}`,
  search,
  hash,
});

describe('the public view’s address', () => {
  it('takes the id from the path and the key from the fragment; defaults: no zoom lock, English, no tilt', () => {
    expect(parsePublicLocation(at(''))).toEqual({
      dashboardId: ID,
      key: 'swd_abc',
      options: { zoomLock: false, pitch: 0, language: 'en', mapStyle: null },
    });
  });

  it('honours zoomlock, pitch, language and mapstyle, clamping and ignoring what it does not know', () => {
    expect(parsePublicLocation(at('?zoomlock=true&pitch=40&language=de&mapstyle=dark')).options).toEqual({
      zoomLock: true,
      pitch: 40,
      language: 'de',
      mapStyle: 'dark',
    });
    expect(parsePublicLocation(at('?zoomlock=false&pitch=200&language=fr&mapstyle=neon')).options).toEqual({
      zoomLock: false,
      pitch: 85,
      language: 'en',
      mapStyle: null,
    });
    expect(parsePublicLocation(at('?pitch=abc')).options.pitch).toBe(0);
  });

  it('has no key without the fragment, and no id on another path', () => {
    expect(parsePublicLocation(at('', '')).key).toBeNull();
    expect(
      parsePublicLocation({ pathname: '/public/dashboards/x', search: '', hash: '' }).dashboardId,
    ).toBeNull();
  });

  it('puts view parameters in the query and leaves the key in the fragment', () => {
    const url = `http://site.example/public/dashboards/${ID}#key=swd_abc`;
    expect(linkWithOptions(url, { zoomLock: true, language: 'de' })).toBe(
      `http://site.example/public/dashboards/${ID}?zoomlock=true&language=de#key=swd_abc`,
    );
    expect(linkWithOptions(url, { zoomLock: false, language: 'en' })).toBe(url);
  });
});
