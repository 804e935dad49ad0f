import { describe, expect, it } from 'vitest';
import { enDevices } from '../../../../renderer/src/i18n/en.devices.js';
import { CONNECTOR_TYPES } from './index.js';

describe('connector kind names in the console', () => {
  // German has each English text: the console's dictionary test holds the two to the same keys.
  it('names every kind (the type filter, the new-connector dialog)', () => {
    const names = enDevices.connectors.typeNames;
    expect(CONNECTOR_TYPES.filter((type) => !Object.hasOwn(names, type))).toEqual([]);
  });
});
