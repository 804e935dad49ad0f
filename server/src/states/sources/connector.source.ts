import { Type, type Static } from 'typebox';
import { defineSource } from './state-source-kind.js';
import { Id, StateKey } from './fields.js';

const settings = Type.Object({
  type: Type.Literal('connector'),
  connectorId: Id,
  deviceId: { ...Id, description: "The virtual device's id (uuid), not its `device_id`." },
  stateKey: { ...StateKey, description: 'Device state key: a driver target variable, `_parsed` or `_raw`.' },
});

/** A state of one device, addressed through its connector (blocks deleting that connector). */
export type ConnectorSource = Static<typeof settings>;

export const connectorSource = defineSource<ConnectorSource>({
  type: 'connector',
  summary: 'A state of one device, addressed through its connector.',
  settings,
  device: 'connector',
  settable: false,
  routing: 'device',
  form: [
    { key: 'connectorId', widget: 'connector' },
    { key: 'deviceId', widget: 'device' },
    { key: 'stateKey', widget: 'text' },
  ],
});
