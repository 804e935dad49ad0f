import { describe, expect, it } from 'vitest';
import {
  bucketFor,
  CHART_RANGES,
  coversZoom,
  MAX_BUCKETS,
  RANGE_MS,
  zonedInstant,
  zonedLocal,
  zoomWindow,
} from './chart-range';

const MINUTE = 60_000;

describe('the aggregation a chart window asks for', () => {
  it('reads raw points up to an hour and buckets beyond, per preset range', () => {
    const chosen = Object.fromEntries(
      CHART_RANGES.map((range) => [range, bucketFor(RANGE_MS[range])?.text ?? 'raw']),
    );
    expect(chosen).toEqual({
      '5m': 'raw',
      '15m': 'raw',
      '1h': 'raw',
      '6h': '1m',
      '24h': '5m',
      '7d': '30m',
      '30d': '2h',
      '90d': '6h',
      '1y': '1d',
    });
  });

  it('keeps zoomed and custom windows at or below the bucket cap, with the finest ladder step that does', () => {
    const cases: [number, string][] = [
      [61 * MINUTE, '10s'],
      [3 * 60 * MINUTE, '30s'],
      [2 * 86_400_000, '10m'],
      [200 * 86_400_000, '12h'],
      [3 * 365 * 86_400_000, '1w'],
    ];
    for (const [span, text] of cases) {
      const bucket = bucketFor(span)!;
      expect(bucket.text).toBe(text);
      expect(span / bucket.ms).toBeLessThanOrEqual(MAX_BUCKETS);
    }
  });

  it('gets finer as the window shrinks, down to raw points', () => {
    const spans = [RANGE_MS['1y'], RANGE_MS['30d'], RANGE_MS['24h'], 3 * 60 * MINUTE, 45 * MINUTE];
    const widths = spans.map((span) => bucketFor(span)?.ms ?? 0);
    expect(widths).toEqual([...widths].sort((a, b) => b - a));
    expect(widths.at(-1)).toBe(0);
  });
});

describe('zooming', () => {
  const full = { from: 0, to: 24 * 60 * MINUTE };

  it('turns the zoom percentages into a window of the full range', () => {
    expect(zoomWindow(full, 50, 75)).toEqual({ from: 12 * 60 * MINUTE, to: 18 * 60 * MINUTE });
    expect(zoomWindow(full, -5, 120)).toEqual(full);
  });

  it('re-queries when the zoom needs a finer aggregation or leaves the loaded window', () => {
    const loaded = { ...full, bucket: '5m' };
    // A 20-hour zoom still draws 5-minute means from what is loaded.
    expect(coversZoom(loaded, zoomWindow(full, 10, 93))).toBe(true);
    // Three hours want 30-second means; half an hour wants raw points.
    expect(coversZoom(loaded, { from: 0, to: 180 * MINUTE })).toBe(false);
    expect(coversZoom(loaded, { from: 0, to: 30 * MINUTE })).toBe(false);
    const raw = { from: 0, to: 60 * MINUTE, bucket: null };
    expect(coversZoom(raw, { from: 10 * MINUTE, to: 20 * MINUTE })).toBe(true);
    // Panned past the loaded hour.
    expect(coversZoom(raw, { from: 50 * MINUTE, to: 70 * MINUTE })).toBe(false);
  });
});

describe('custom windows in the console time zone', () => {
  it('reads a wall-clock time in the chosen zone, across daylight saving', () => {
    expect(zonedInstant('2026-11-26T10:15', 'Europe/Berlin')).toBe(Date.parse('2026-11-26T09:15:00Z'));
    expect(zonedInstant('2026-07-01T10:15:30', 'Europe/Berlin')).toBe(Date.parse('2026-07-01T08:15:30Z'));
    expect(zonedInstant('2026-11-26T10:15', 'UTC')).toBe(Date.parse('2026-11-26T10:15:00Z'));
    expect(zonedInstant('26.11.2026', 'UTC')).toBeNull();
  });

  it('writes an instant back as the zone’s wall clock', () => {
    expect(zonedLocal(Date.parse('2026-07-01T08:15:00Z'), 'Europe/Berlin')).toBe('2026-07-01T10:15');
    expect(zonedLocal(Date.parse('2026-11-26T09:15:00Z'), 'America/New_York')).toBe('2026-11-26T04:15');
  });
});
