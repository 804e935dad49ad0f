/** The console's own frame: permissions, unsaved changes, account appearance and meta info (German: de.console.ts). */
export const enConsole = {
  noPermission: {
    title: 'No permission',
    text: 'Your roles do not allow this page. It needs the permission {permission}; an administrator of your account can give it to you.',
  },
  unsaved: {
    confirm: 'You have unsaved changes. Leave this page and discard them?',
  },
  appearance: {
    inherit: 'As the parent account',
    inheritedValue: 'As the parent account ({value})',
    colorTheme: 'Colour theme',
    colorThemes: { blue: 'Blue', teal: 'Teal', violet: 'Violet', amber: 'Amber', green: 'Green' } as Record<
      string,
      string
    >,
    fonts: 'Fonts',
    fontsBrand: 'Console font (Inter, where installed)',
    fontsSystem: 'Fonts of the operating system',
    inheritedHint: 'Settings marked “as the parent account” follow the parent account when it changes.',
  },
  metaInfo: {
    heading: 'Meta info',
    intro:
      'Free key–value pairs that describe this account (for example site, operator, cost centre); readable through the API.',
    key: 'Key',
    value: 'Value',
    add: 'Add an entry',
    remove: 'Remove {key}',
    empty: 'No meta info yet.',
    duplicateKey: 'The key {key} is used twice.',
    structured: 'Structured value (JSON), kept as it is',
  },
};
