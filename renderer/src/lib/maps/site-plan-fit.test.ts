import { describe, expect, it } from 'vitest';
import { boundsOf, cornersFromControlPoints, type Corners } from './site-plan-fit';

const close = (actual: Corners, expected: Corners) =>
  actual.forEach((corner, i) => {
    expect(corner[0]).toBeCloseTo(expected[i]![0], 7);
    expect(corner[1]).toBeCloseTo(expected[i]![1], 7);
  });

describe('site plan corners from three points', () => {
  it('gives back the corners of an upright plan from three of its own corners', () => {
    const corners: Corners = [
      [8.54, 47.38],
      [8.55, 47.38],
      [8.55, 47.37],
      [8.54, 47.37],
    ];
    const fitted = cornersFromControlPoints({ width: 1000, height: 800 }, [
      { pixel: [0, 0], lngLat: corners[0] },
      { pixel: [1000, 0], lngLat: corners[1] },
      { pixel: [0, 800], lngLat: corners[3] },
    ]);
    // The bottom-right corner is computed, and straight in Web Mercator it stays on the same meridian and parallel.
    close(fitted!, corners);
  });

  it('rotates and scales from points inside the image', () => {
    // A plan turned by 90°: its x axis runs north, its y axis east; 1 px = 1e-5 degrees of longitude.
    const fitted = cornersFromControlPoints({ width: 200, height: 100 }, [
      { pixel: [50, 50], lngLat: [10.0005, 0.0005] },
      { pixel: [150, 50], lngLat: [10.0005, 0.0015] },
      { pixel: [50, 0], lngLat: [10, 0.0005] },
    ])!;
    expect(fitted[0][0]).toBeCloseTo(10, 6);
    expect(fitted[0][1]).toBeCloseTo(0, 6);
    expect(fitted[1][1]).toBeCloseTo(0.002, 6);
    expect(fitted[3][0]).toBeCloseTo(10.001, 6);
  });

  it('refuses three points on one line', () => {
    expect(
      cornersFromControlPoints({ width: 10, height: 10 }, [
        { pixel: [0, 0], lngLat: [0, 0] },
        { pixel: [5, 5], lngLat: [1, 1] },
        { pixel: [10, 10], lngLat: [2, 2] },
      ]),
    ).toBeNull();
  });

  it('bounds the corners of a turned plan', () => {
    expect(
      boundsOf([
        [1, 2],
        [3, 1],
        [4, 3],
        [2, 4],
      ]),
    ).toEqual([
      [1, 1],
      [4, 4],
    ]);
  });
});
