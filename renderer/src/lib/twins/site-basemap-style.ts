import type { LayerSpecification, StyleSpecification } from 'maplibre-gl';

/**
 * Styles for a site's own `.pmtiles` basemap, made from what the archive says about itself: raster
 * tiles become one raster layer; vector tiles (MVT) a plain style over the archive's `vector_layers`
 * (polygons filled, lines stroked, points as dots), in neutral colours chosen per theme, so any
 * archive is readable without a hand-made style. The source is the `pmtiles://` protocol's URL.
 */
export interface SiteMapColours {
  background: string;
  fill: string;
  outline: string;
  line: string;
  point: string;
  water: string;
}

export const SITE_MAP_COLOURS: Record<'light' | 'dark', SiteMapColours> = {
  light: {
    background: '#f4f3ee',
    fill: '#dbd7ca',
    outline: '#aaa494',
    line: '#8a91a1',
    point: '#4f5a6e',
    water: '#bcd2ea',
  },
  dark: {
    background: '#141a27',
    fill: '#27314a',
    outline: '#3f4d6d',
    line: '#75809b',
    point: '#b4bdd0',
    water: '#0a1930',
  },
};

export type Geometry = 'Polygon' | 'LineString' | 'Point';

export interface VectorLayerInfo {
  id: string;
  /** From the metadata's tilestats when present; unknown → a layer of each kind, filtered by geometry. */
  geometry?: Geometry;
}

export const SITE_SOURCE = 'site';
const WATER = /water|ocean|sea\b|lake|river|reservoir/i;

/** `vector_layers` of PMTiles (tippecanoe) metadata, with the geometry from `tilestats` where given. */
export function vectorLayersOf(metadata: unknown): VectorLayerInfo[] {
  const meta = (typeof metadata === 'object' && metadata !== null ? metadata : {}) as Record<string, unknown>;
  const stats = (meta.tilestats as { layers?: unknown } | undefined)?.layers;
  const geometryOf = new Map<string, Geometry>();
  if (Array.isArray(stats))
    for (const item of stats as { layer?: unknown; geometry?: unknown }[])
      if (
        typeof item.layer === 'string' &&
        ['Polygon', 'LineString', 'Point'].includes(String(item.geometry))
      )
        geometryOf.set(item.layer, item.geometry as Geometry);
  const layers = Array.isArray(meta.vector_layers) ? (meta.vector_layers as { id?: unknown }[]) : [];
  return layers
    .filter((layer): layer is { id: string } => typeof layer.id === 'string' && layer.id !== '')
    .map((layer) => ({
      id: layer.id,
      ...(geometryOf.has(layer.id) ? { geometry: geometryOf.get(layer.id)! } : {}),
    }));
}

const background = (colours: SiteMapColours): LayerSpecification => ({
  id: 'site-background',
  type: 'background',
  paint: { 'background-color': colours.background },
});

export function rasterSiteStyle(pmtilesUrl: string, colours: SiteMapColours): StyleSpecification {
  return {
    version: 8,
    sources: { [SITE_SOURCE]: { type: 'raster', url: `pmtiles://${pmtilesUrl}`, tileSize: 256 } },
    layers: [background(colours), { id: 'site-raster', type: 'raster', source: SITE_SOURCE }],
  };
}

const isGeometry = (kinds: string[]) =>
  ['match', ['geometry-type'], kinds, true, false] as ['match', ...unknown[]];

export function vectorSiteStyle(
  pmtilesUrl: string,
  layers: VectorLayerInfo[],
  colours: SiteMapColours,
): StyleSpecification {
  const has = (layer: VectorLayerInfo, geometry: Geometry) => !layer.geometry || layer.geometry === geometry;
  const base = (layer: VectorLayerInfo) => ({ source: SITE_SOURCE, 'source-layer': layer.id });
  const fills: LayerSpecification[] = layers
    .filter((layer) => has(layer, 'Polygon'))
    .map((layer) => ({
      id: `site-fill-${layer.id}`,
      type: 'fill',
      ...base(layer),
      filter: isGeometry(['Polygon', 'MultiPolygon']) as never,
      paint: {
        'fill-color': WATER.test(layer.id) ? colours.water : colours.fill,
        'fill-outline-color': WATER.test(layer.id) ? colours.water : colours.outline,
        'fill-opacity': 0.85,
      },
    }));
  const lines: LayerSpecification[] = layers
    .filter((layer) => has(layer, 'LineString'))
    .map((layer) => ({
      id: `site-line-${layer.id}`,
      type: 'line',
      ...base(layer),
      filter: isGeometry(['LineString', 'MultiLineString']) as never,
      layout: { 'line-cap': 'round', 'line-join': 'round' },
      paint: {
        'line-color': WATER.test(layer.id) ? colours.water : colours.line,
        'line-width': ['interpolate', ['linear'], ['zoom'], 5, 0.5, 16, 2.5],
      },
    }));
  const points: LayerSpecification[] = layers
    .filter((layer) => has(layer, 'Point'))
    .map((layer) => ({
      id: `site-point-${layer.id}`,
      type: 'circle',
      ...base(layer),
      filter: isGeometry(['Point', 'MultiPoint']) as never,
      paint: {
        'circle-color': colours.point,
        'circle-radius': ['interpolate', ['linear'], ['zoom'], 5, 1.5, 16, 4],
        'circle-stroke-color': colours.background,
        'circle-stroke-width': 1,
      },
    }));
  return {
    version: 8,
    sources: { [SITE_SOURCE]: { type: 'vector', url: `pmtiles://${pmtilesUrl}` } },
    layers: [background(colours), ...fills, ...lines, ...points],
  };
}
