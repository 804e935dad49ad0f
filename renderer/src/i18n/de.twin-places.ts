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
  pickerLabel:
    'Standortwahl: in die Karte klicken oder die Markierung ziehen, um Breiten- und Längengrad zu setzen',
  pickerHint:
    'In die Karte klicken oder die Markierung ziehen; die Felder oben ändern sich mit und bleiben editierbar.',
  pickerMarker: 'Standort des Zwillings (zum Verschieben ziehen)',
  pickerClear: 'Standort entfernen',
  location: 'Standort',
  statusFilter: 'Nach Status filtern',
  clearFilters: 'Alle Zwillinge zeigen',
  matching: '{count} Zwilling passt zum Filter|{count} Zwillinge passen zum Filter',
};
