import { describe, expect, it } from 'vitest';
import { addressDraftOf, addressLine, addressOf } from './twin-address';

describe('twin address', () => {
  it('edits the usual lines and sends back lines the form does not show', () => {
    const draft = addressDraftOf({ street: 'Hauptstr. 1', city: 'Bern', building: 'B2' });
    expect(draft.address).toEqual({
      street: 'Hauptstr. 1',
      postalCode: '',
      city: 'Bern',
      region: '',
      country: '',
    });
    draft.address.postalCode = ' 3011 ';
    draft.address.street = '';
    expect(addressOf(draft)).toEqual({ building: 'B2', postalCode: '3011', city: 'Bern' });
  });

  it('is no address when nothing is filled and nothing is kept', () => {
    expect(addressOf(addressDraftOf(null))).toBeNull();
    const blank = addressDraftOf(null);
    blank.address.city = '   ';
    expect(addressOf(blank)).toBeNull();
  });

  it('reads as one line with the postal code before the city', () => {
    expect(addressLine({ street: 'Hauptstr. 1', postalCode: '3011', city: 'Bern', country: 'CH' })).toBe(
      'Hauptstr. 1, 3011 Bern, CH',
    );
    expect(addressLine({ city: 'Bern', postalCode: 42 })).toBe('Bern');
    expect(addressLine(null)).toBe('');
  });
});
