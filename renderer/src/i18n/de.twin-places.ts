import type { enTwinPlaces } from './en.twin-places';

/** Deutsche Texte zum Ort eines Zwillings: Adresse, Standortwahl auf der Karte, Kartenfilter. */
export const deTwinPlaces: typeof enTwinPlaces = {
  address: 'Adresse',
  street: 'Straße und Hausnummer',
  postalCode: 'Postleitzahl',
  city: 'Ort',
  region: 'Region',
  country: 'Land',
  noAddress: 'Keine Adresse',
  picker: 'Standort auf der Karte',
  pickerHint:
    'In die Karte klicken oder die Markierung ziehen; die Felder oben ändern sich mit und bleiben editierbar.',
  pickerMarker: 'Standort des Zwillings (zum Verschieben ziehen)',
  pickerClear: 'Standort entfernen',
  location: 'Standort',
  latitudeRange: 'Der Breitengrad liegt zwischen −90 und 90.',
  longitudeRange: 'Der Längengrad liegt zwischen −180 und 180.',
  statusFilter: 'Nach Status filtern',
  clearFilters: 'Alle Zwillinge zeigen',
};
