import { Type, type Static } from 'typebox';
import { defineSource } from './state-source-kind.js';

const settings = Type.Object({ type: Type.Literal('boolean'), initial: Type.Optional(Type.Boolean()) });

/** A boolean switched by users (twin-button tile, PUT) or rules; starts at `initial`. */
export type BooleanSource = Static<typeof settings>;

export const booleanSource = defineSource<BooleanSource>({
  type: 'boolean',
  summary: 'A boolean switched by users or rules, starting at `initial`.',
  settings,
  settable: true,
  valueType: 'boolean',
  initial: (source) => source.initial ?? false,
  form: [{ key: 'initial', widget: 'checkbox' }],
});
