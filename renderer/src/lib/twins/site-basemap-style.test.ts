import { describe, expect, it } from 'vitest';
import { rasterSiteStyle, SITE_MAP_COLOURS, vectorLayersOf, vectorSiteStyle } from './site-basemap-style';

const URL = 'https://stellwerk.example/maps/site.pmtiles';

describe('site basemap styles from a .pmtiles archive', () => {
  it('draws raster tiles as one raster layer over the background', () => {
    const style = rasterSiteStyle(URL, SITE_MAP_COLOURS.light);
    expect(style.sources.site).toEqual({ type: 'raster', url: `pmtiles://${URL}`, tileSize: 256 });
    expect(style.layers.map((layer) => layer.type)).toEqual(['background', 'raster']);
  });

  it('reads vector_layers and the geometry tilestats name', () => {
    expect(
      vectorLayersOf({
        vector_layers: [{ id: 'buildings' }, { id: 'roads' }, { id: 'poi' }, { id: '' }, { name: 'no id' }],
        tilestats: {
          layers: [
            { layer: 'buildings', geometry: 'Polygon' },
            { layer: 'roads', geometry: 'LineString' },
          ],
        },
      }),
    ).toEqual([
      { id: 'buildings', geometry: 'Polygon' },
      { id: 'roads', geometry: 'LineString' },
      { id: 'poi' },
    ]);
    for (const nothing of [null, 'x', {}, { vector_layers: 'x' }])
      expect(vectorLayersOf(nothing)).toEqual([]);
  });

  it('fills polygons, strokes lines and dots points, lines above fills, water in its colour', () => {
    const style = vectorSiteStyle(
      URL,
      [{ id: 'buildings', geometry: 'Polygon' }, { id: 'water' }, { id: 'roads', geometry: 'LineString' }],
      SITE_MAP_COLOURS.dark,
    );
    expect(style.sources.site).toEqual({ type: 'vector', url: `pmtiles://${URL}` });
    expect(style.layers.map((layer) => layer.id)).toEqual([
      'site-background',
      'site-fill-buildings',
      'site-fill-water',
      'site-line-water',
      'site-line-roads',
      'site-point-water',
    ]);
    const water = style.layers.find((layer) => layer.id === 'site-fill-water');
    expect(water).toMatchObject({
      'source-layer': 'water',
      paint: { 'fill-color': SITE_MAP_COLOURS.dark.water },
    });
    const roads = style.layers.find((layer) => layer.id === 'site-line-roads');
    expect(roads).toMatchObject({
      filter: ['match', ['geometry-type'], ['LineString', 'MultiLineString'], true, false],
    });
  });
});
