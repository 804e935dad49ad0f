/**
 * A twin's postal address (the API's `address` object) as the form edits it and the twin page shows
 * it. The form shows the usual lines; further lines a client stored (district, building …) are kept.
 */

/** The address lines the form shows, in the API's field names. */
export const ADDRESS_FIELDS = ['street', 'postalCode', 'city', 'region', 'country'] as const;
export type AddressField = (typeof ADDRESS_FIELDS)[number];

export interface AddressDraft {
  address: Record<AddressField, string>;
  otherAddressLines: Record<string, unknown>;
}

export function addressDraftOf(address: Record<string, unknown> | null): AddressDraft {
  const shown = Object.fromEntries(
    ADDRESS_FIELDS.map((field) => [field, typeof address?.[field] === 'string' ? address[field] : '']),
  ) as Record<AddressField, string>;
  const otherAddressLines = Object.fromEntries(
    Object.entries(address ?? {}).filter(([key]) => !(ADDRESS_FIELDS as readonly string[]).includes(key)),
  );
  return { address: shown, otherAddressLines };
}

/** The address to send: the filled lines plus the kept ones; nothing filled and nothing kept is no address. */
export function addressOf(draft: AddressDraft): Record<string, string> | null {
  const lines: Record<string, string> = {};
  for (const [key, value] of Object.entries(draft.otherAddressLines))
    if (typeof value === 'string') lines[key] = value;
  for (const field of ADDRESS_FIELDS) {
    const value = draft.address[field].trim();
    if (value) lines[field] = value;
  }
  return Object.keys(lines).length > 0 ? lines : null;
}

/** The address in one line, as the twin page shows it (postal code before the city, as in Europe). */
export function addressLine(address: Record<string, unknown> | null): string {
  if (!address) return '';
  const text = (key: string) => (typeof address[key] === 'string' ? address[key].trim() : '');
  const place = [text('postalCode'), text('city')].filter(Boolean).join(' ');
  return [text('street'), place, text('region'), text('country')].filter(Boolean).join(', ');
}
