import { describe, expect, it } from 'vitest';
import { cornersOf, lngLatOf, textsOf } from './site-plan-form';

describe('site plan corner fields', () => {
  it('reads decimal commas and points, and refuses what is not a coordinate', () => {
    expect(lngLatOf({ latitude: '47,38', longitude: '8.54' })).toEqual([8.54, 47.38]);
    expect(lngLatOf({ latitude: '91', longitude: '8' })).toBeNull();
    expect(lngLatOf({ latitude: '47.3x', longitude: '8' })).toBeNull();
  });

  it('saves all four corners, none (unplaced), or asks for the missing ones', () => {
    const corners = textsOf([
      [8.54, 47.38],
      [8.55, 47.38],
      [8.55, 47.37],
      [8.54, 47.37],
    ]);
    expect(cornersOf(corners)?.[2]).toEqual([8.55, 47.37]);
    expect(cornersOf(textsOf(null))).toBeNull();
    expect(cornersOf([...corners.slice(0, 3), { latitude: '47.37', longitude: '' }])).toBe('incomplete');
  });
});
