import { Type, type Static } from 'typebox';
import { defineSource } from './state-source-kind.js';
import { Id, StateKey } from './fields.js';

const settings = Type.Object({ type: Type.Literal('hub'), deviceId: Id, stateKey: StateKey });

/** A value of a legacy IoT hub device (hub API), by the hub device's id and value key. */
export type HubSource = Static<typeof settings>;

export const hubSource = defineSource<HubSource>({
  type: 'hub',
  summary: 'A value of a legacy IoT hub device, by its id and value key.',
  settings,
  device: 'any',
  settable: false,
  routing: 'device',
  form: [
    { key: 'deviceId', widget: 'text' },
    { key: 'stateKey', widget: 'text' },
  ],
});
