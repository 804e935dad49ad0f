import { Type, type Static } from 'typebox';
import { defineSource } from './state-source-kind.js';
import { StateKey } from './fields.js';

const settings = Type.Object({ type: Type.Literal('dynamic-routing'), stateKey: StateKey });

/** Dynamic data routing: any device whose `referenceId` equals the twin's `referenceId`. */
export type DynamicRoutingSource = Static<typeof settings>;

export const dynamicRoutingSource = defineSource<DynamicRoutingSource>({
  type: 'dynamic-routing',
  summary: "A state of any device whose reference id equals the twin's.",
  settings,
  settable: false,
  routing: 'reference',
  form: [{ key: 'stateKey', widget: 'text' }],
});
