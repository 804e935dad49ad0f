/** English texts of a twin's place: address, location picker, map filters (German: de.twin-places.ts). */
export const enTwinPlaces = {
  address: 'Address',
  street: 'Street and number',
  postalCode: 'Postal code',
  city: 'City',
  region: 'Region',
  country: 'Country',
  noAddress: 'No address',
  picker: 'Location on the map',
  pickerHint: 'Click the map or drag the marker; the fields above change with it and stay editable.',
  pickerMarker: 'Location of the twin (drag to move)',
  pickerClear: 'Remove the location',
  location: 'Location',
  latitudeRange: 'Latitude lies between −90 and 90.',
  longitudeRange: 'Longitude lies between −180 and 180.',
  statusFilter: 'Filter by status',
  clearFilters: 'Show all twins',
};
