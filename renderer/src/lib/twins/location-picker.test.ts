import { describe, expect, it } from 'vitest';
import { coordinateProblem, fieldsOf, needsMove, pointOf, wrapLongitude } from './location-picker';

describe('location picker', () => {
  it('writes a picked point into the fields, rounded to six decimals and inside the valid range', () => {
    expect(fieldsOf({ lat: 47.376887123456, lng: 8.541694987654 })).toEqual({
      latitude: '47.376887',
      longitude: '8.541695',
    });
    expect(fieldsOf({ lat: 91, lng: 190 })).toEqual({ latitude: '90', longitude: '-170' });
    expect(fieldsOf({ lat: -12.5, lng: -540 })).toEqual({ latitude: '-12.5', longitude: '-180' });
  });

  it('wraps longitudes past the date line', () => {
    expect(wrapLongitude(0)).toBe(0);
    expect(wrapLongitude(181)).toBe(-179);
    expect(wrapLongitude(-181)).toBe(179);
    expect(wrapLongitude(180)).toBe(180);
    expect(wrapLongitude(-180)).toBe(-180);
    expect(wrapLongitude(721)).toBe(1);
  });

  it('reads the fields as a point only when both are valid numbers in range, with a decimal comma too', () => {
    expect(pointOf('47,5', '8.25')).toEqual({ latitude: 47.5, longitude: 8.25 });
    expect(pointOf('', '8')).toBeNull();
    expect(pointOf('47', 'east')).toBeNull();
    expect(pointOf('95', '8')).toBeNull();
    expect(pointOf('-90', '-180')).toEqual({ latitude: -90, longitude: -180 });
  });

  it('names what is wrong with a typed coordinate', () => {
    expect(coordinateProblem('', 'latitude')).toBeUndefined();
    expect(coordinateProblem('abc', 'latitude')).toBe('number');
    expect(coordinateProblem('Infinity', 'longitude')).toBe('number');
    expect(coordinateProblem('90.5', 'latitude')).toBe('range');
    expect(coordinateProblem('90.5', 'longitude')).toBeUndefined();
    expect(coordinateProblem('-180.01', 'longitude')).toBe('range');
  });

  it('moves the marker only when the fields point elsewhere than the marker', () => {
    expect(needsMove(null, { latitude: 1, longitude: 2 })).toBe(true);
    expect(needsMove({ lat: 1, lng: 2 }, null)).toBe(false);
    expect(needsMove({ lat: 47.3768871, lng: 8.5416949 }, { latitude: 47.376887, longitude: 8.541695 })).toBe(
      false,
    );
    expect(needsMove({ lat: 47.3768, lng: 8.5416 }, { latitude: 47.376887, longitude: 8.541695 })).toBe(true);
  });
});
