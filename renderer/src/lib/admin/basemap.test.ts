import { describe, expect, it } from 'vitest';
import { basemapFor } from './basemap';

const PAGE = 'https://stellwerk.example/#/map';

describe('basemapFor', () => {
  it('keeps the offline basemap when nothing usable is set', () => {
    for (const setting of [undefined, null, '', '   ', 42, 'javascript:alert(1)'])
      expect(basemapFor(setting, PAGE)).toEqual({ kind: 'offline' });
  });

  it('resolves a style path against the page and tells same-origin styles apart', () => {
    expect(basemapFor('/maps/style.json', PAGE)).toEqual({
      kind: 'style',
      url: 'https://stellwerk.example/maps/style.json',
      sameOrigin: true,
    });
    expect(basemapFor('https://tiles.example.com/style.json', PAGE)).toMatchObject({ sameOrigin: false });
  });

  it('recognises a .pmtiles archive, on this server or another', () => {
    expect(basemapFor('/maps/Site.PMTiles', PAGE)).toEqual({
      kind: 'pmtiles',
      url: 'https://stellwerk.example/maps/Site.PMTiles',
      sameOrigin: true,
    });
    expect(basemapFor('https://tiles.example.com/site.pmtiles?v=2', PAGE)).toEqual({
      kind: 'pmtiles',
      url: 'https://tiles.example.com/site.pmtiles?v=2',
      sameOrigin: false,
    });
  });
});
