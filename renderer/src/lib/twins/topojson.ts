/**
 * A small TopoJSON → GeoJSON converter for the offline basemap (world-atlas ships TopoJSON only and
 * topojson-client is not a dependency). Handles what world-atlas uses: quantized or plain arcs,
 * Polygon / MultiPolygon / LineString / MultiLineString / Point geometries in a GeometryCollection.
 */
export interface Topology {
  type: 'Topology';
  transform?: { scale: [number, number]; translate: [number, number] };
  arcs: number[][][];
  objects: Record<string, TopoGeometry>;
}

export interface TopoGeometry {
  type: string;
  id?: string | number;
  properties?: Record<string, unknown>;
  arcs?: unknown;
  coordinates?: unknown;
  geometries?: TopoGeometry[];
}

type Position = [number, number];

export interface GeoFeature {
  type: 'Feature';
  id?: string | number;
  properties: Record<string, unknown>;
  geometry: { type: string; coordinates: unknown } | null;
}

export interface GeoFeatureCollection {
  type: 'FeatureCollection';
  features: GeoFeature[];
}

/** The arcs in absolute coordinates: quantized arcs are delta-encoded and scaled by the transform. */
function decodeArcs(topology: Topology): Position[][] {
  const transform = topology.transform;
  return topology.arcs.map((arc) => {
    let x = 0;
    let y = 0;
    return arc.map((point): Position => {
      if (!transform) return [point[0]!, point[1]!];
      x += point[0]!;
      y += point[1]!;
      return [
        x * transform.scale[0] + transform.translate[0],
        y * transform.scale[1] + transform.translate[1],
      ];
    });
  });
}

/** A ring or line from arc indexes; a negative index `~i` is arc `i` reversed. Shared end points are dropped. */
function stitch(indexes: number[], arcs: Position[][]): Position[] {
  const points: Position[] = [];
  for (const index of indexes) {
    const arc = index < 0 ? [...(arcs[~index] ?? [])].reverse() : (arcs[index] ?? []);
    arc.forEach((point, i) => {
      if (i > 0 || points.length === 0) points.push(point);
    });
  }
  return points;
}

function geometry(object: TopoGeometry, arcs: Position[][], transform: Topology['transform']) {
  const line = (indexes: number[]) => stitch(indexes, arcs);
  const ring = (indexes: number[]) => {
    const points = line(indexes);
    // GeoJSON rings are closed and have at least four positions.
    while (points.length < 4 && points.length > 0) points.push(points[0]!);
    return points;
  };
  const point = (p: number[]): Position =>
    transform
      ? [
          p[0]! * transform.scale[0] + transform.translate[0],
          p[1]! * transform.scale[1] + transform.translate[1],
        ]
      : [p[0]!, p[1]!];
  switch (object.type) {
    case 'Polygon':
      return { type: 'Polygon', coordinates: (object.arcs as number[][]).map(ring) };
    case 'MultiPolygon':
      return { type: 'MultiPolygon', coordinates: (object.arcs as number[][][]).map((p) => p.map(ring)) };
    case 'LineString':
      return { type: 'LineString', coordinates: line(object.arcs as number[]) };
    case 'MultiLineString':
      return { type: 'MultiLineString', coordinates: (object.arcs as number[][]).map(line) };
    case 'Point':
      return { type: 'Point', coordinates: point(object.coordinates as number[]) };
    case 'MultiPoint':
      return { type: 'MultiPoint', coordinates: (object.coordinates as number[][]).map(point) };
    default:
      return null;
  }
}

/** The named object of `topology` (e.g. `countries`) as a GeoJSON FeatureCollection. */
export function topologyToGeoJson(topology: Topology, objectName: string): GeoFeatureCollection {
  const root = topology.objects[objectName];
  if (!root) throw new Error(`The topology has no object named ${objectName}`);
  const arcs = decodeArcs(topology);
  const members = root.type === 'GeometryCollection' ? (root.geometries ?? []) : [root];
  return {
    type: 'FeatureCollection',
    features: members.map((member) => ({
      type: 'Feature',
      ...(member.id === undefined ? {} : { id: member.id }),
      properties: member.properties ?? {},
      geometry: geometry(member, arcs, topology.transform),
    })),
  };
}
