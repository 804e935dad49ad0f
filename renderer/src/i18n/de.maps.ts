import type { Messages } from './en';

/** German texts of basemap uploads and site plans. */
export const deMaps: Messages['maps'] = {
  basemap: {
    heading: 'Hochgeladene Grundkarte',
    intro:
      'Laden Sie ein .pmtiles-Archiv (PMTiles Version 3) hoch, um es als Grundkarte dieses Kontos zu verwenden. Nur angemeldete Benutzer dieses Kontos, der übergeordneten Konten und seiner Unterkonten können es laden.',
    none: 'Keine Grundkarte hochgeladen.',
    current: '{size}, hochgeladen {time}',
    choose: 'Ein .pmtiles-Archiv hochladen',
    replace: 'Durch ein anderes Archiv ersetzen',
    remove: 'Hochgeladene Grundkarte entfernen',
    removeConfirm:
      'Die hochgeladene Grundkarte entfernen? Die Karte zeigt dann die geerbte oder die Offline-Grundkarte.',
    uploading: '{name} wird hochgeladen: {percent}',
    progressLabel: 'Fortschritt des Hochladens',
    uploaded: '{name} wurde hochgeladen und ist jetzt die Grundkarte.',
    removed: 'Die hochgeladene Grundkarte wurde entfernt.',
    limit:
      'Der Server nimmt Archive bis zu der in STELLWERK_BASEMAP_MAX_BYTES eingestellten Größe an (standardmäßig 2 GiB).',
  },
  plans: {
    open: 'Lagepläne',
    dialogTitle: 'Lagepläne',
    intro:
      'Bilder des Standorts (PNG, JPEG oder WebP), auf der Karte unter den Zwillingen platziert und ab ihrer Mindestzoomstufe gezeigt.',
    empty: 'Noch keine Lagepläne.',
    add: 'Neuer Lageplan',
    edit: 'Bearbeiten',
    delete: 'Löschen',
    deleteConfirm: 'Den Lageplan „{title}“ mit seinem Bild löschen?',
    show: 'Auf der Karte zeigen',
    notPlaced: 'nicht platziert',
    noImage: 'kein Bild',
    placed: 'platziert',
    close: 'Schließen',
    titleLabel: 'Titel',
    image: 'Bild (PNG, JPEG oder WebP)',
    imageHint:
      'SVG wird nicht angenommen, da es Skripte enthalten kann. Exportieren Sie den Plan stattdessen als PNG.',
    imageKept: 'Bisheriges Bild bleibt: {size}',
    uploadingImage: 'Das Bild wird hochgeladen: {percent}',
    opacity: 'Deckkraft',
    minZoom: 'Gezeigt ab Zoomstufe',
    placeBy: 'Platzieren über',
    byCorners: 'Vier Ecken',
    byPoints: 'Drei Punkte',
    corners: {
      topLeft: 'Ecke oben links',
      topRight: 'Ecke oben rechts',
      bottomRight: 'Ecke unten rechts',
      bottomLeft: 'Ecke unten links',
    },
    latitude: 'Breitengrad',
    longitude: 'Längengrad',
    pointsIntro:
      'Klicken Sie auf einen Punkt im Bild und geben Sie seine Koordinaten an; drei Punkte, die nicht auf einer Linie liegen, legen Lage, Maßstab und Drehung des Plans fest.',
    point: 'Punkt {n}',
    pixel: 'Position im Bild: {x}, {y}',
    pixelUnset: 'Position im Bild: ins Bild klicken',
    pickPoint: 'Position von Punkt {n} im Bild setzen',
    imagePreview: 'Bild des Plans; klicken, um die Position von Punkt {n} zu setzen',
    computeCorners: 'Ecken berechnen',
    pointsOnALine: 'Die drei Punkte liegen auf einer Linie; wählen Sie Punkte, die den Plan aufspannen.',
    needImage: 'Wählen Sie zuerst ein Bild.',
    save: 'Lageplan speichern',
    cancel: 'Abbrechen',
    saved: 'Lageplan „{title}“ gespeichert.',
    cornersIncomplete: 'Füllen Sie alle vier Ecken aus, oder keine, um den Plan unplatziert zu speichern.',
  },
};
