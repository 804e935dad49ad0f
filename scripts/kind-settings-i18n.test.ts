import { describe, expect, it } from 'vitest';
import { CONNECTOR_KIND_DESCRIPTORS } from '../server/src/connectors/kinds/index.js';
import { deKindSettings } from '../renderer/src/i18n/de.kind-settings.js';

/** The settings the console renders from kind schemas, as `kind.setting`. */
const SETTINGS = CONNECTOR_KIND_DESCRIPTORS.filter((k) => !k.freeForm).flatMap((k) =>
  Object.keys(k.settings.properties).map((key) => `${k.type}.${key}`),
);

describe('translations of connector-kind settings', () => {
  it('has a German label for every setting of every kind (lists the missing ones)', () => {
    const missing = SETTINGS.filter((name) => {
      const [kind, key] = [name.slice(0, name.lastIndexOf('.')), name.slice(name.lastIndexOf('.') + 1)];
      return !deKindSettings[kind]?.[key]?.label;
    });
    expect(missing).toEqual([]);
  });

  it('translates no setting that does not exist', () => {
    const known = new Set(SETTINGS);
    const stale = Object.entries(deKindSettings).flatMap(([kind, texts]) =>
      Object.keys(texts)
        .map((key) => `${kind}.${key}`)
        .filter((name) => !known.has(name)),
    );
    expect(stale).toEqual([]);
  });
});
