/**
 * Geofences for location rules, pure. An area is GeoJSON (RFC 7946, [longitude, latitude]):
 * - a `Polygon` or `MultiPolygon` geometry (holes respected), or a `Feature` carrying one;
 * - a circle: a `Feature` with a `Point` geometry and `properties.radius` in metres (the common
 *   GeoJSON circle convention; GeoJSON itself has no circle).
 * A position comes from a twin's location state: a GeoJSON Point, `[lon, lat]`, or an object with
 * `lat`/`latitude` and `lon`/`lng`/`longitude`.
 */

export type Position = { lon: number; lat: number };
type Ring = number[][];

export type GeoArea =
  | { type: 'Polygon'; coordinates: Ring[] }
  | { type: 'MultiPolygon'; coordinates: Ring[][] }
  | {
      type: 'Feature';
      geometry: { type: string; coordinates: unknown };
      properties?: Record<string, unknown> | null;
    };

const EARTH_RADIUS_M = 6_371_008.8;
const MAX_VERTICES = 10_000;

const isLonLat = (p: unknown): p is number[] =>
  Array.isArray(p) &&
  p.length >= 2 &&
  typeof p[0] === 'number' &&
  typeof p[1] === 'number' &&
  Number.isFinite(p[0]) &&
  Number.isFinite(p[1]) &&
  Math.abs(p[0]) <= 180 &&
  Math.abs(p[1]) <= 90;

const isRing = (r: unknown): r is Ring => Array.isArray(r) && r.length >= 4 && r.every(isLonLat);

/** Why an area cannot be used, or undefined. */
export function areaProblem(area: unknown): string | undefined {
  if (!area || typeof area !== 'object') return 'area must be a GeoJSON object';
  const a = area as { type?: unknown; coordinates?: unknown; geometry?: unknown; properties?: unknown };
  if (a.type === 'Feature') {
    const g = a.geometry as { type?: unknown; coordinates?: unknown } | null | undefined;
    if (!g || typeof g !== 'object') return 'a Feature needs a geometry';
    if (g.type === 'Point') {
      const radius = (a.properties as { radius?: unknown } | null | undefined)?.radius;
      if (!isLonLat(g.coordinates)) return 'the circle centre must be [longitude, latitude]';
      return typeof radius === 'number' && Number.isFinite(radius) && radius > 0 && radius <= 20_000_000
        ? undefined
        : 'a circle needs properties.radius in metres (> 0)';
    }
    return areaProblem(g);
  }
  let vertices = 0;
  const polygonProblem = (p: unknown) => {
    if (!Array.isArray(p) || p.length === 0 || !p.every(isRing))
      return 'a polygon is rings of at least 4 [longitude, latitude] positions';
    vertices += p.reduce((n, r) => n + r.length, 0);
    return undefined;
  };
  let problem: string | undefined;
  if (a.type === 'Polygon') problem = polygonProblem(a.coordinates);
  else if (a.type === 'MultiPolygon') {
    if (!Array.isArray(a.coordinates) || a.coordinates.length === 0) return 'a MultiPolygon needs polygons';
    for (const p of a.coordinates) problem ??= polygonProblem(p);
  } else
    return 'area must be a Polygon, MultiPolygon, or a Feature with one of them or a Point with properties.radius';
  if (problem) return problem;
  return vertices > MAX_VERTICES ? `an area may have at most ${MAX_VERTICES} positions` : undefined;
}

/** Whether `p` lies inside the (valid) area; on an edge counts as inside only by chance of rounding. */
export function contains(area: GeoArea, p: Position): boolean {
  if (area.type === 'Feature') {
    const g = area.geometry;
    if (g.type === 'Point') {
      const [lon, lat] = g.coordinates as number[];
      return distanceMetres({ lon: lon!, lat: lat! }, p) <= Number(area.properties?.radius);
    }
    return contains(g as GeoArea, p);
  }
  const polygons = area.type === 'Polygon' ? [area.coordinates] : area.coordinates;
  return polygons.some(([outer, ...holes]) => inRing(outer!, p) && !holes.some((h) => inRing(h, p)));
}

/** Ray casting on the plane of longitude/latitude (fine for areas far smaller than a hemisphere). */
function inRing(ring: Ring, p: Position): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i] as [number, number];
    const [xj, yj] = ring[j] as [number, number];
    if (yi > p.lat !== yj > p.lat && p.lon < ((xj - xi) * (p.lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Great-circle distance (haversine). */
export function distanceMetres(a: Position, b: Position): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A position from a location state's value, or null when the value is not one. */
export function positionOf(value: unknown): Position | null {
  if (isLonLat(value)) return { lon: value[0]!, lat: value[1]! };
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (v.type === 'Point' && isLonLat(v.coordinates))
    return { lon: v.coordinates[0]!, lat: v.coordinates[1]! };
  const lat = v.lat ?? v.latitude;
  const lon = v.lon ?? v.lng ?? v.longitude;
  const pair = [Number(lon), Number(lat)];
  return (typeof lat === 'number' || typeof lat === 'string') &&
    (typeof lon === 'number' || typeof lon === 'string') &&
    isLonLat(pair)
    ? { lon: pair[0]!, lat: pair[1]! }
    : null;
}
