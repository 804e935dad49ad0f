/** Rule areas (GeoJSON polygons and circles): the examples, the checks the server makes, the map preview. */

export const SAMPLE_AREA = JSON.stringify(
  {
    type: 'Polygon',
    coordinates: [
      [
        [13.37, 52.51],
        [13.42, 52.51],
        [13.42, 52.53],
        [13.37, 52.53],
        [13.37, 52.51],
      ],
    ],
  },
  null,
  2,
);

export const SAMPLE_CIRCLE = JSON.stringify(
  { type: 'Feature', geometry: { type: 'Point', coordinates: [13.405, 52.52] }, properties: { radius: 500 } },
  null,
  2,
);

const isLonLat = (p: unknown): boolean =>
  Array.isArray(p) &&
  p.length >= 2 &&
  typeof p[0] === 'number' &&
  typeof p[1] === 'number' &&
  Math.abs(p[0]) <= 180 &&
  Math.abs(p[1]) <= 90;
const isPolygon = (p: unknown): boolean =>
  Array.isArray(p) &&
  p.length > 0 &&
  p.every((ring) => Array.isArray(ring) && ring.length >= 4 && ring.every(isLonLat));

/** Why a value is not a usable area (the server's rules, docs/rules.md), or undefined. */
export function areaProblem(area: unknown): string | undefined {
  if (!area || typeof area !== 'object' || Array.isArray(area)) return 'The area must be a GeoJSON object.';
  const a = area as { type?: unknown; coordinates?: unknown; geometry?: unknown; properties?: unknown };
  if (a.type === 'Feature') {
    const g = a.geometry as { type?: unknown; coordinates?: unknown } | null | undefined;
    if (!g || typeof g !== 'object') return 'A Feature needs a geometry.';
    if (g.type === 'Point') {
      const radius = (a.properties as { radius?: unknown } | null | undefined)?.radius;
      if (!isLonLat(g.coordinates)) return 'The circle centre must be [longitude, latitude].';
      return typeof radius === 'number' && radius > 0
        ? undefined
        : 'A circle needs properties.radius in metres (> 0).';
    }
    return areaProblem(g);
  }
  if (a.type === 'Polygon')
    return isPolygon(a.coordinates)
      ? undefined
      : 'A polygon is rings of at least 4 [longitude, latitude] positions.';
  if (a.type === 'MultiPolygon')
    return Array.isArray(a.coordinates) && a.coordinates.length > 0 && a.coordinates.every(isPolygon)
      ? undefined
      : 'A multipolygon is polygons of rings of at least 4 [longitude, latitude] positions.';
  return 'Use a Polygon, a MultiPolygon, or a Feature with a Point and properties.radius (a circle).';
}

/** The area as polygons for the map preview: a circle becomes a 64-sided polygon. */
export function areaPolygons(area: unknown): number[][][][] {
  if (areaProblem(area)) return [];
  const a = area as {
    type: string;
    coordinates?: unknown;
    geometry?: { type: string; coordinates: unknown };
    properties?: { radius?: number };
  };
  if (a.type === 'Feature' && a.geometry?.type === 'Point') {
    const [lon, lat] = a.geometry.coordinates as [number, number];
    return [[circleRing(lon, lat, a.properties!.radius!)]];
  }
  const g = a.type === 'Feature' ? a.geometry! : (a as { type: string; coordinates: unknown });
  return g.type === 'Polygon' ? [g.coordinates as number[][][]] : (g.coordinates as number[][][][]);
}

function circleRing(lon: number, lat: number, radius: number): number[][] {
  const ring: number[][] = [];
  const dLat = (radius / 6_371_008.8) * (180 / Math.PI);
  const dLon = dLat / Math.max(Math.cos((lat * Math.PI) / 180), 1e-6);
  for (let i = 0; i <= 64; i++) {
    const angle = (i / 64) * 2 * Math.PI;
    ring.push([lon + dLon * Math.cos(angle), lat + dLat * Math.sin(angle)]);
  }
  return ring;
}
