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
  type StyleSpecification,
} from 'maplibre-gl';
import type { FeatureCollection } from 'geojson';
import workerUrl from 'maplibre-gl/dist/maplibre-gl-worker.mjs?url';
import { PMTiles, Protocol, TileType } from 'pmtiles';
// A file of its own under /assets (content-hashed, cached immutable, pre-compressed), not part of this
// chunk: the map's code and its world outline are fetched in parallel, and a new build of either
// leaves the other cached.
import countriesUrl from 'world-atlas/countries-50m.json?url';
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

// The offline basemap's source URL: MapLibre asks this handler, which fetches the world-atlas
// TopoJSON once and hands MapLibre the GeoJSON it draws (MapLibre reads no TopoJSON itself).
const COUNTRIES_SOURCE = 'stellwerk-world://countries';
let countriesGeoJson: Promise<FeatureCollection> | undefined;
addProtocol('stellwerk-world', async () => {
  countriesGeoJson ??= fetch(countriesUrl)
    .then((response) => {
      if (!response.ok) throw new Error(`${countriesUrl}: ${response.status}`);
      return response.json() as Promise<Topology>;
    })
    .then((topology) => topologyToGeoJson(topology, 'countries') as unknown as FeatureCollection);
  // A failed fetch is tried again when the style is next set.
  void countriesGeoJson.catch(() => (countriesGeoJson = undefined));
  return { data: await countriesGeoJson };
});

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
      countries: { type: 'geojson', data: COUNTRIES_SOURCE },
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
