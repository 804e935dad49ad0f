// Loaded only by the map page: maplibre-gl, its worker (served from our own origin, as the CSP asks),
// and the bundled Natural Earth countries from world-atlas. Nothing here touches the network beyond /assets.
import 'maplibre-gl/dist/maplibre-gl.css';
import {
  Map as MapLibreMap,
  Marker,
  NavigationControl,
  Popup,
  setWorkerUrl,
  type StyleSpecification,
} from 'maplibre-gl';
import type { FeatureCollection } from 'geojson';
import workerUrl from 'maplibre-gl/dist/maplibre-gl-worker.mjs?url';
import countries from 'world-atlas/countries-50m.json';
import { topologyToGeoJson, type Topology } from '../../lib/twins/topojson';

setWorkerUrl(workerUrl);

export { MapLibreMap, Marker, NavigationControl, Popup };

export interface BasemapColours {
  water: string;
  land: string;
  border: string;
}

let countriesGeoJson: ReturnType<typeof topologyToGeoJson> | undefined;

/**
 * The offline basemap: one GeoJSON source of the world's countries, drawn as land fill and borders
 * over a water background. No glyphs, sprites or tiles, so the style needs no URL at all.
 *
 * A site's own basemap plugs in here later (settings): a style URL (`https://tiles.example/style.json`)
 * is passed to `new Map({ style: url })` instead of this object, and a `.pmtiles` file is a vector
 * source `{ type: 'vector', url: 'pmtiles:///maps/site.pmtiles' }` once the `pmtiles` protocol is
 * registered with `addProtocol('pmtiles', …)` (the `pmtiles` package, not bundled yet).
 */
export function offlineStyle(colours: BasemapColours): StyleSpecification {
  countriesGeoJson ??= topologyToGeoJson(countries as unknown as Topology, 'countries');
  return {
    version: 8,
    sources: {
      countries: { type: 'geojson', data: countriesGeoJson as unknown as FeatureCollection },
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
