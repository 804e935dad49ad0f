import { Type } from 'typebox';
import { PLAIN_DEVICES, type ConnectorKindDescriptor, type DeviceIdentityRules } from '../connector-kind.js';

/**
 * A kind the data model admits (spec, Connector kinds) but that does nothing yet: it can be
 * created, listed, activated and deleted; its `capabilities` are empty, so the console shows it
 * as "stored only". Settings are free-form; values under secret-looking keys are sealed and masked.
 */
export function plannedKind(
  type: string,
  direction: 'incoming' | 'outgoing',
  summary: string,
  devices: DeviceIdentityRules = PLAIN_DEVICES,
): ConnectorKindDescriptor {
  return {
    type,
    direction,
    summary: `${summary} Stored only: does nothing yet.`,
    capabilities: [],
    settings: Type.Object({}, { description: 'Free-form; secret-looking keys are sealed' }),
    freeForm: true,
    devices,
  };
}
