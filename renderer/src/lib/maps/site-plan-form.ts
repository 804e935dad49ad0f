import type { Corners, LngLat } from './site-plan-fit';

/** A coordinate field pair as typed: decimal comma or point. */
export interface CoordinateText {
  latitude: string;
  longitude: string;
}

const number = (text: string): number | null => {
  const trimmed = text.trim().replace(',', '.');
  if (!/^-?\d+(\.\d+)?$/.test(trimmed)) return null;
  return Number(trimmed);
};

/** One typed coordinate as `[longitude, latitude]`, or null when incomplete or out of range. */
export function lngLatOf(text: CoordinateText): LngLat | null {
  const lat = number(text.latitude);
  const lng = number(text.longitude);
  if (lat === null || lng === null || Math.abs(lat) > 85.05 || Math.abs(lng) > 180) return null;
  return [lng, lat];
}

/**
 * The four typed corners: the corners, `null` when all are empty (the plan is saved unplaced), or
 * 'incomplete' when some are missing or invalid.
 */
export function cornersOf(texts: CoordinateText[]): Corners | null | 'incomplete' {
  if (texts.every((text) => !text.latitude.trim() && !text.longitude.trim())) return null;
  const corners = texts.map(lngLatOf);
  if (corners.length !== 4 || corners.some((corner) => corner === null)) return 'incomplete';
  return corners as Corners;
}

/** Corners as the fields show them (six decimals: about 10 cm). */
export const textsOf = (corners: Corners | null): CoordinateText[] =>
  [0, 1, 2, 3].map((i) => ({
    latitude: corners ? corners[i]![1].toFixed(6) : '',
    longitude: corners ? corners[i]![0].toFixed(6) : '',
  }));
