// Loaded only by the map page: maplibre-gl, its worker (served from our own origin, as the CSP asks),
// and the Natural Earth countries from world-atlas. Nothing here touches the network beyond /assets.
import 'maplibre-gl/dist/maplibre-gl.css';
import {
  addProtocol,
  Map as MapLibreMap,
  Marker,
  NavigationControl,
  Popup,
  setWorkerUrl,
  type GeoJSONSource,
  type StyleSpecification,
} from 'maplibre-gl';
import type { FeatureCollection } from 'geojson';
import workerUrl from 'maplibre-gl/dist/maplibre-gl-worker.mjs?url';
import { PMTiles, Protocol, TileType } from 'pmtiles';
// Files of their own under /assets (content-hashed, cached immutable, pre-compressed), not part of
// this chunk: a new build of the code leaves them cached. Natural Earth's 1:110m outline (33 kB on
// the wire) draws the world and country views; the 1:50m one (205 kB) is fetched only once a map is
// zoomed in far enough for its coastlines to show the difference.
import countriesCoarseUrl from 'world-atlas/countries-110m.json?url';
import countriesDetailedUrl from 'world-atlas/countries-50m.json?url';
import {
  rasterSiteStyle,
  vectorLayersOf,
  vectorSiteStyle,
  type SiteMapColours,
} from '../../lib/twins/site-basemap-style';
import { topologyToGeoJson, type Topology } from '../../lib/twins/topojson';

setWorkerUrl(workerUrl);

// `pmtiles://` sources (a site's archive, or a style JSON that names one) read byte ranges of the
// archive; registered once, with the map chunk, so the initial route stays small.
const pmtilesProtocol = new Protocol();
addProtocol('pmtiles', pmtilesProtocol.tile);

// The offline basemap's source URLs: MapLibre asks this handler, which fetches the world-atlas
// TopoJSON once per level of detail and hands MapLibre the GeoJSON it draws (it reads no TopoJSON).
const OUTLINES = { coarse: countriesCoarseUrl, detailed: countriesDetailedUrl };
type Outline = keyof typeof OUTLINES;
const outlineSource = (outline: Outline) => `stellwerk-world://${outline}`;
const outlines = new Map<Outline, Promise<FeatureCollection>>();
addProtocol('stellwerk-world', async ({ url }) => {
  const outline: Outline = url.endsWith('detailed') ? 'detailed' : 'coarse';
  let geojson = outlines.get(outline);
  if (!geojson) {
    const file = OUTLINES[outline];
    geojson = fetch(file)
      .then((response) => {
        if (!response.ok) throw new Error(`${file}: ${response.status}`);
        return response.json() as Promise<Topology>;
      })
      .then((topology) => topologyToGeoJson(topology, 'countries') as unknown as FeatureCollection);
    outlines.set(outline, geojson);
    // A failed fetch is tried again when the style or zoom next asks for it.
    void geojson.catch(() => outlines.delete(outline));
  }
  return { data: await geojson };
});

/** From this zoom on, the 1:110m coastlines look angular: the 1:50m outline replaces them. */
export const DETAILED_OUTLINE_ZOOM = 6;
const detailedSources = new WeakSet<GeoJSONSource>();

/**
 * Swaps the offline basemap's outline for the detailed one the first time `map` is at or past
 * DETAILED_OUTLINE_ZOOM (again after a new style). Maps that stay at world or country scale never
 * download it.
 */
export function detailOnZoom(map: MapLibreMap): void {
  const update = () => {
    const source = map.getSource<GeoJSONSource>('countries');
    if (!source || detailedSources.has(source) || map.getZoom() < DETAILED_OUTLINE_ZOOM) return;
    detailedSources.add(source);
    void source.setData(outlineSource('detailed'));
  };
  map.on('zoomend', update);
  map.on('style.load', update);
}

export { MapLibreMap, Marker, NavigationControl, Popup };

export interface BasemapColours {
  water: string;
  land: string;
  border: string;
}

/**
 * The offline basemap: one GeoJSON source of the world's countries, drawn as land fill and borders
 * over a water background. No glyphs, sprites or tiles, so the style needs no URL at all.
 * A site's own basemap replaces it (settings): a style URL is passed to `new Map({ style: url })`,
 * a `.pmtiles` archive gets a style from `siteBasemap` below.
 */
export function offlineStyle(colours: BasemapColours): StyleSpecification {
  return {
    version: 8,
    sources: {
      countries: { type: 'geojson', data: outlineSource('coarse') },
    },
    layers: [
      { id: 'water', type: 'background', paint: { 'background-color': colours.water } },
      { id: 'land', type: 'fill', source: 'countries', paint: { 'fill-color': colours.land } },
      {
        id: 'borders',
        type: 'line',
        source: 'countries',
        paint: {
          'line-color': colours.border,
          'line-width': ['interpolate', ['linear'], ['zoom'], 1, 0.4, 8, 1.4],
        },
      },
    ],
  };
}

/** Recolours the basemap for the other theme without reloading the data. */
export function applyColours(map: MapLibreMap, colours: BasemapColours): void {
  map.setPaintProperty('water', 'background-color', colours.water);
  map.setPaintProperty('land', 'fill-color', colours.land);
  map.setPaintProperty('borders', 'line-color', colours.border);
}

/** What a site's `.pmtiles` archive gives the map: its style and the view its header suggests. */
export interface SiteBasemap {
  /** Builds the style for the theme's colours (called again when the theme changes). */
  style(colours: SiteMapColours): StyleSpecification;
  center: [number, number];
  zoom: number;
  minZoom: number;
}

/**
 * Reads the archive's header (and, for vector tiles, its metadata) through byte ranges. Raster
 * tiles (PNG, JPEG, WebP, AVIF) → a raster layer; MVT → a generated style over its `vector_layers`.
 * Throws for an archive that is not PMTiles v3 or holds tiles MapLibre cannot draw.
 */
export async function siteBasemap(url: string): Promise<SiteBasemap> {
  const archive = new PMTiles(url);
  pmtilesProtocol.add(archive);
  const header = await archive.getHeader();
  const view = {
    center: [header.centerLon, header.centerLat] as [number, number],
    zoom: header.centerZoom,
    minZoom: header.minZoom,
  };
  if ([TileType.Png, TileType.Jpeg, TileType.Webp, TileType.Avif].includes(header.tileType))
    return { ...view, style: (colours) => rasterSiteStyle(url, colours) };
  if (header.tileType === TileType.Mvt) {
    const layers = vectorLayersOf(await archive.getMetadata());
    if (layers.length === 0) throw new Error('the archive names no vector_layers in its metadata');
    return { ...view, style: (colours) => vectorSiteStyle(url, layers, colours) };
  }
  throw new Error(`tiles of type ${TileType[header.tileType] ?? header.tileType} cannot be drawn`);
}
