/**
 * The location picker's arithmetic: the form keeps latitude and longitude as text (a half-typed value
 * is not lost), the map works in numbers. A click or a dragged marker writes the fields; valid
 * fields move the marker.
 */

export interface Point {
  latitude: number;
  longitude: number;
}

/** Six decimals: about 0.1 m, finer than any click; more digits only look precise. */
export const DECIMALS = 6;
/** The zoom a picker opens at around a placed twin: a building and its surroundings. */
export const SITE_ZOOM = 16;

/** A typed coordinate as a number (a decimal comma counts, as German users type it); empty: null. */
export function coordinateNumber(text: string): number | null {
  const trimmed = text.trim();
  return trimmed === '' ? null : Number(trimmed.replace(',', '.'));
}

export type CoordinateProblem = 'number' | 'range';

/** What is wrong with one typed coordinate, if anything (empty is not wrong here). */
export function coordinateProblem(
  text: string,
  axis: 'latitude' | 'longitude',
): CoordinateProblem | undefined {
  const value = coordinateNumber(text);
  if (value === null) return undefined;
  if (!Number.isFinite(value)) return 'number';
  const limit = axis === 'latitude' ? 90 : 180;
  return Math.abs(value) > limit ? 'range' : undefined;
}

/** The point the two fields describe, or null while either is empty or invalid. */
export function pointOf(latitude: string, longitude: string): Point | null {
  if (coordinateProblem(latitude, 'latitude') || coordinateProblem(longitude, 'longitude')) return null;
  const lat = coordinateNumber(latitude);
  const lng = coordinateNumber(longitude);
  return lat === null || lng === null ? null : { latitude: lat, longitude: lng };
}

/** A longitude brought into −180…180 (the map reports it beyond after panning across the date line). */
export function wrapLongitude(longitude: number): number {
  const wrapped = ((((longitude + 180) % 360) + 360) % 360) - 180;
  return wrapped === -180 && longitude > 0 ? 180 : wrapped;
}

const rounded = (value: number) => String(Number(value.toFixed(DECIMALS)));

/** The fields' text for a point picked on the map. */
export function fieldsOf(point: { lat: number; lng: number }): { latitude: string; longitude: string } {
  const latitude = Math.min(90, Math.max(-90, point.lat));
  return { latitude: rounded(latitude), longitude: rounded(wrapLongitude(point.lng)) };
}

/** Whether the marker must move to the fields' point (a drag already put it there, give or take rounding). */
export function needsMove(marker: { lat: number; lng: number } | null, point: Point | null): boolean {
  if (!point) return false;
  if (!marker) return true;
  const tolerance = 10 ** -DECIMALS;
  return (
    Math.abs(marker.lat - point.latitude) > tolerance || Math.abs(marker.lng - point.longitude) > tolerance
  );
}
