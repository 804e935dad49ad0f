import { describe, expect, it } from 'vitest';
import { enDevices } from '../../../../renderer/src/i18n/en.devices.js';
import { enFlows } from '../../../../renderer/src/i18n/en.flows.js';
import { CONNECTOR_KIND_DESCRIPTORS, CONNECTOR_TYPES } from './index.js';

describe('connector kind names in the console', () => {
  // German has each English text: the console's dictionary test holds the two to the same keys.
  it('names every kind (the type filter, the new-connector dialog)', () => {
    const names = enDevices.connectors.typeNames;
    expect(CONNECTOR_TYPES.filter((type) => !Object.hasOwn(names, type))).toEqual([]);
  });

  // The dialog is where a user learns what a kind does; the server's summary is English only.
  it('describes every kind the new-connector dialog offers, in the console’s words', () => {
    const hints: Record<string, Record<string, string>> = {
      incoming: enDevices.connectors.typeHints,
      outgoing: enFlows.outgoing.typeHints,
    };
    const offered = CONNECTOR_KIND_DESCRIPTORS.filter((k) => k.capabilities.length > 0);
    expect(offered.filter((k) => !Object.hasOwn(hints[k.direction]!, k.type)).map((k) => k.type)).toEqual([]);
  });
});
