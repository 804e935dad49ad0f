import type { Map as MapLibreMap } from 'maplibre-gl';
import { boundsOf, type Corners } from './site-plan-fit';

/** What the map needs of a site plan (the XAPI's site plan reply has these fields). */
export interface DrawnSitePlan {
  id: string;
  corners: Corners | null;
  opacity: number;
  minZoom: number;
  image: { url: string } | null;
}

const PREFIX = 'site-plan-';

/**
 * Draws site plans as image layers on top of the basemap, so under the twin markers (which are
 * HTML elements above the canvas), from each plan's minimum zoom on. Plans without corners or image
 * are left out. Keeps them across style changes (a theme switch replaces the style and its layers).
 * Answers a function that sets the plans to draw.
 */
export function keepSitePlans(map: MapLibreMap): (plans: readonly DrawnSitePlan[]) => void {
  let drawn: readonly DrawnSitePlan[] = [];
  const sync = () => {
    if (!map.isStyleLoaded()) return;
    const wanted = new Set(drawn.map((plan) => PREFIX + plan.id));
    for (const layer of map.getStyle().layers ?? [])
      if (layer.id.startsWith(PREFIX) && !wanted.has(layer.id)) map.removeLayer(layer.id);
    for (const id of Object.keys(map.getStyle().sources ?? {}))
      if (id.startsWith(PREFIX) && !wanted.has(id)) map.removeSource(id);
    for (const plan of drawn) {
      const id = PREFIX + plan.id;
      if (!plan.corners || !plan.image) continue;
      const source = map.getSource(id) as
        { updateImage?: (o: { url: string; coordinates: Corners }) => void } | undefined;
      if (source?.updateImage) source.updateImage({ url: plan.image.url, coordinates: plan.corners });
      else map.addSource(id, { type: 'image', url: plan.image.url, coordinates: plan.corners });
      if (map.getLayer(id)) {
        map.setPaintProperty(id, 'raster-opacity', plan.opacity);
        map.setLayerZoomRange(id, plan.minZoom, 24);
      } else
        map.addLayer({
          id,
          type: 'raster',
          source: id,
          minzoom: plan.minZoom,
          paint: { 'raster-opacity': plan.opacity, 'raster-fade-duration': 0 },
        });
    }
  };
  map.on('style.load', sync);
  map.on('load', sync);
  return (plans) => {
    drawn = plans.filter((plan) => plan.corners && plan.image);
    sync();
  };
}

/** Moves the map onto a placed plan: the whole plan in view, zoom 18 at most for a small one. */
export function showSitePlan(map: MapLibreMap, corners: Corners): void {
  map.fitBounds(boundsOf(corners), { padding: 40, maxZoom: 18, animate: false });
}
