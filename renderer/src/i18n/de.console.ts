import type { enConsole } from './en.console';

export const deConsole: typeof enConsole = {
  noPermission: {
    title: 'Keine Berechtigung',
    text: 'Ihre Rollen erlauben diese Seite nicht. Sie braucht die Berechtigung {permission}; eine Administratorin oder ein Administrator Ihres Kontos kann sie Ihnen geben.',
  },
  unsaved: {
    confirm: 'Es gibt ungespeicherte Änderungen. Seite verlassen und die Änderungen verwerfen?',
  },
  appearance: {
    inherit: 'Wie das übergeordnete Konto',
    inheritedValue: 'Wie das übergeordnete Konto ({value})',
    colorTheme: 'Farbschema',
    colorThemes: { blue: 'Blau', teal: 'Petrol', violet: 'Violett', amber: 'Bernstein', green: 'Grün' },
    fonts: 'Schriften',
    fontsBrand: 'Schrift der Konsole (Inter, wo installiert)',
    fontsSystem: 'Schriften des Betriebssystems',
    inheritedHint:
      'Einstellungen „wie das übergeordnete Konto“ folgen dem übergeordneten Konto, wenn es sich ändert.',
  },
  metaInfo: {
    heading: 'Metainformationen',
    intro:
      'Freie Schlüssel-Wert-Paare, die dieses Konto beschreiben (zum Beispiel Standort, Betreiber, Kostenstelle); über die API lesbar.',
    key: 'Schlüssel',
    value: 'Wert',
    add: 'Eintrag hinzufügen',
    remove: '{key} entfernen',
    empty: 'Noch keine Metainformationen.',
    duplicateKey: 'Der Schlüssel {key} kommt doppelt vor.',
    structured: 'Strukturierter Wert (JSON), bleibt unverändert',
  },
};
