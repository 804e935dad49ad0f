import type { enPublicDashboards } from './en.public-dashboards';

/** Deutsche Texte zum Veröffentlichen eines Dashboards und seiner öffentlichen Ansicht. */
export const dePublicDashboards: typeof enPublicDashboards = {
  share: 'Teilen',
  dialogTitle: 'Öffentlicher Link',
  intro:
    'Wer den Link hat, sieht dieses Dashboard ohne Anmeldung, live und nur lesend: seine Widgets, deren Zwillinge und Datenpunkte sowie seine Karten.',
  notPublished: 'Nicht veröffentlicht.',
  published: 'Veröffentlicht mit Schlüssel {prefix}… seit {date}.',
  publish: 'Veröffentlichen',
  publishing: 'Wird veröffentlicht…',
  rotate: 'Neuer Schlüssel',
  rotateConfirm: 'Einen neuen Schlüssel erzeugen? Der bisherige Link funktioniert sofort nicht mehr.',
  rotateTitle: 'Neuer Schlüssel für den Link',
  rotateAction: 'Neuen Schlüssel erzeugen',
  revoke: 'Veröffentlichung beenden',
  revokeConfirm:
    'Veröffentlichung beenden? Der Link funktioniert sofort nicht mehr, offene Ansichten werden geschlossen.',
  revokeTitle: 'Veröffentlichung des Dashboards beenden',
  linkOnce: 'Kopieren Sie den Link jetzt: Sein Schlüssel wird nur dieses eine Mal angezeigt.',
  link: 'Link',
  copyLink: 'Link kopieren',
  zoomLock: 'Kartenzoom sperren',
  language: 'Sprache der Ansicht',
  close: 'Schließen',
  viewLabel: 'Öffentliches Dashboard',
  loading: 'Dashboard wird geladen…',
  refused: 'Dieses Dashboard ist nicht veröffentlicht, oder der Link ist nicht mehr gültig.',
  noKey:
    'Diesem Link fehlt der Schlüssel. Bitten Sie den Eigentümer des Dashboards um den vollständigen Link.',
  live: 'Live',
  connecting: 'Verbindung wird aufgebaut…',
  offline: 'Verbindung wird wiederhergestellt…',
  readOnly: 'Nur-Lese-Ansicht',
  empty: 'Dieses Dashboard hat keine Widgets.',
};
