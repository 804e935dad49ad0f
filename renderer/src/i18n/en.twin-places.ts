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
  pickerLabel: 'Location picker: click the map or drag the marker to set latitude and longitude',
  pickerHint: 'Click the map or drag the marker; the fields above change with it and stay editable.',
  pickerMarker: 'Location of the twin (drag to move)',
  pickerClear: 'Remove the location',
  location: 'Location',
  statusFilter: 'Filter by status',
  clearFilters: 'Show all twins',
  matching: '{count} twin matches the filter|{count} twins match the filter',
};
