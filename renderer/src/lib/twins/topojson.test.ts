import { describe, expect, it } from 'vitest';
import { topologyToGeoJson, type Topology } from './topojson';

describe('topologyToGeoJson', () => {
  it('decodes quantized, delta-encoded arcs and stitches reversed arcs into closed rings', () => {
    // Two squares sharing the arc 0 (x = 1 from y = 0 to y = 1): left uses it forwards, right reversed.
    const topology: Topology = {
      type: 'Topology',
      transform: { scale: [0.5, 0.5], translate: [10, 20] },
      arcs: [
        [
          [2, 0],
          [0, 2],
        ],
        [
          [2, 2],
          [-2, 0],
          [0, -2],
          [2, 0],
        ],
        [
          [2, 0],
          [2, 0],
          [0, 2],
          [-2, 0],
        ],
      ],
      objects: {
        shapes: {
          type: 'GeometryCollection',
          geometries: [
            { type: 'Polygon', arcs: [[0, 1]], id: 'L', properties: { name: 'left' } },
            { type: 'MultiPolygon', arcs: [[[2, -1]]], id: 'R' },
          ],
        },
      },
    };
    const result = topologyToGeoJson(topology, 'shapes');
    expect(result.features).toEqual([
      {
        type: 'Feature',
        id: 'L',
        properties: { name: 'left' },
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [11, 20],
              [11, 21],
              [10, 21],
              [10, 20],
              [11, 20],
            ],
          ],
        },
      },
      {
        type: 'Feature',
        id: 'R',
        properties: {},
        geometry: {
          type: 'MultiPolygon',
          coordinates: [
            [
              [
                [11, 20],
                [12, 20],
                [12, 21],
                [11, 21],
                [11, 20],
              ],
            ],
          ],
        },
      },
    ]);
  });

  it('converts the bundled world-atlas countries into closed polygons', async () => {
    const { default: world } = await import('world-atlas/countries-110m.json', { with: { type: 'json' } });
    const result = topologyToGeoJson(world as unknown as Topology, 'countries');
    expect(result.features.length).toBeGreaterThan(150);
    const germany = result.features.find((feature) => feature.properties.name === 'Germany');
    const ring = (germany?.geometry?.coordinates as number[][][])[0]!;
    expect(ring[0]).toEqual(ring.at(-1));
    // Berlin's longitude and latitude lie inside Germany's bounding box.
    const xs = ring.map((p) => p[0]!);
    const ys = ring.map((p) => p[1]!);
    expect(Math.min(...xs)).toBeLessThan(13.4);
    expect(Math.max(...xs)).toBeGreaterThan(13.4);
    expect(Math.min(...ys)).toBeLessThan(52.5);
    expect(Math.max(...ys)).toBeGreaterThan(52.5);
  });
});
