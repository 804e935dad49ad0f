/** `[longitude, latitude]`. */
export type LngLat = [number, number];
/** Top-left, top-right, bottom-right, bottom-left: MapLibre's image-source order. */
export type Corners = [LngLat, LngLat, LngLat, LngLat];

/** A point of the image (pixels from its top-left) and where it lies on the map. */
export interface ControlPoint {
  pixel: [number, number];
  lngLat: LngLat;
}

const RADIUS = 6_378_137;
const toMercator = ([lng, lat]: LngLat): [number, number] => [
  (RADIUS * lng * Math.PI) / 180,
  RADIUS * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360)),
];
const fromMercator = ([x, y]: [number, number]): LngLat => [
  (x / RADIUS) * (180 / Math.PI),
  (2 * Math.atan(Math.exp(y / RADIUS)) - Math.PI / 2) * (180 / Math.PI),
];

/**
 * The image's four corners from three control points: the affine map from pixels to Web Mercator
 * that the three pairs fix exactly (rotation, scale, shear and offset), applied to the image's
 * corners. Web Mercator because the map draws the image in it, so straight lines of the plan stay
 * straight on the map. Null when the points lie on one line (no unique fit).
 */
export function cornersFromControlPoints(
  size: { width: number; height: number },
  points: [ControlPoint, ControlPoint, ControlPoint],
): Corners | null {
  const [p1, p2, p3] = points.map((p) => p.pixel);
  const det = p1![0] * (p2![1] - p3![1]) - p1![1] * (p2![0] - p3![0]) + (p2![0] * p3![1] - p3![0] * p2![1]);
  if (Math.abs(det) < 1e-9) return null;
  const target = points.map((p) => toMercator(p.lngLat));
  // Cramer's rule for a·u + b·v + c = t, once per mercator axis.
  const solve = (axis: 0 | 1) => {
    const [t1, t2, t3] = target.map((m) => m[axis]) as [number, number, number];
    const a = (t1 * (p2![1] - p3![1]) - p1![1] * (t2 - t3) + (t2 * p3![1] - t3 * p2![1])) / det;
    const b = (p1![0] * (t2 - t3) - t1 * (p2![0] - p3![0]) + (p2![0] * t3 - p3![0] * t2)) / det;
    const c =
      (p1![0] * (p2![1] * t3 - p3![1] * t2) -
        p1![1] * (p2![0] * t3 - p3![0] * t2) +
        t1 * (p2![0] * p3![1] - p3![0] * p2![1])) /
      det;
    return (u: number, v: number) => a * u + b * v + c;
  };
  const x = solve(0);
  const y = solve(1);
  const corner = (u: number, v: number): LngLat => fromMercator([x(u, v), y(u, v)]);
  const { width: w, height: h } = size;
  return [corner(0, 0), corner(w, 0), corner(w, h), corner(0, h)];
}

/** The bounding box of corners, as MapLibre's `fitBounds` takes it. */
export function boundsOf(corners: Corners): [LngLat, LngLat] {
  const lngs = corners.map((c) => c[0]);
  const lats = corners.map((c) => c[1]);
  return [
    [Math.min(...lngs), Math.min(...lats)],
    [Math.max(...lngs), Math.max(...lats)],
  ];
}
