import { Type, type TLiteral } from 'typebox';
import {
  SOURCE_FIELD_WIDGETS,
  type SourceFieldWidget,
  type StateSourceDescriptor,
} from './sources/state-source-kind.js';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { STATE_VALUE_TYPES, VISUAL_TYPES } from './data-state.entity.js';
import { STATE_SOURCE_TYPES } from './state-source.js';

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

/**
 * `source.type` picks the shape (docs/data-states.md); the service checks it per type
 * (state-source.schemas.ts) so an error names the exact path, e.g. `/source/stateIds/0`.
 */
const SourceBody = Type.Union(
  [
    Type.Object(
      { type: Type.String({ maxLength: 40, description: `One of ${STATE_SOURCE_TYPES.join(', ')}.` }) },
      { additionalProperties: true },
    ),
    Type.Null(),
  ],
  { description: 'Where the value comes from; null: set by PUT or rules.' },
);

const MetaBody = Type.Object(
  {
    visual: Type.Optional(
      Type.Union([
        Type.Object(
          {
            type: Type.Optional(
              Type.Union([Type.String({ maxLength: 40 }), Type.Null()], {
                description: `One of ${VISUAL_TYPES.join(', ')}; common spellings (lineChart, line_chart) are accepted and stored canonical.`,
              }),
            ),
            yAxis: Type.Optional(
              Type.Union([
                Type.Object(
                  {
                    min: Type.Optional(NullableNumber),
                    max: Type.Optional(NullableNumber),
                    unit: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
                  },
                  { additionalProperties: true, description: 'Line chart y-axis; 0 is a valid bound.' },
                ),
                Type.Null(),
              ]),
            ),
          },
          { additionalProperties: true },
        ),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: true, description: 'Console settings; `visual.type` picks the tile.' },
);

const fields = {
  key: Type.String({ minLength: 1, maxLength: 200, description: 'Unique within the twin.' }),
  title: Type.Optional(Type.String({ maxLength: 200 })),
  valueType: Type.Optional(Type.Union(STATE_VALUE_TYPES.map((t) => Type.Literal(t)))),
  unit: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
  source: Type.Optional(SourceBody),
  meta: Type.Optional(MetaBody),
  value: Type.Optional(
    Type.Unknown({
      description:
        'Sets the value (states without a source or with a boolean source); the same value changes nothing.',
    }),
  ),
};

export const DataStateCreate = Type.Object(fields, { additionalProperties: false });

/**
 * Partial; a payload exactly as read back is accepted: read-only fields (id, twinId, accountId,
 * warning, createdAt, updatedAt) are dropped, and `timestamp` marks the `value` as read back.
 */
export const DataStateUpdate = Type.Object(
  {
    ...fields,
    key: Type.Optional(fields.key),
    timestamp: Type.Optional(
      Type.Unknown({
        description:
          'Read-only. When present, `value` is taken as read back: for a computed source it is ignored.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DataStateReply = Type.Object({
  id: Uuid,
  twinId: Uuid,
  accountId: Uuid,
  key: Type.String(),
  title: Type.String(),
  valueType: Type.String(),
  unit: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.Object({ type: Type.String() }, { additionalProperties: true }), Type.Null()]),
  meta: Type.Object({}, { additionalProperties: true }),
  value: Type.Unknown(),
  timestamp: Type.Union([Timestamp, Type.Null()]),
  warning: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DataStateListQuery = Type.Object(ListQuery, { additionalProperties: false });

/** A source as clients see it (docs/adr/0074-connector-kind-descriptors.md): what the console's source form needs. */
export const StateSourceKindReply = Type.Object({
  type: Type.String(),
  summary: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown(), {
    description: 'JSON Schema of the whole `source` object, `type` included',
  }),
  settable: Type.Boolean({ description: 'Users and rules set the value; otherwise it is computed' }),
  form: Type.Array(
    Type.Object({
      key: Type.String(),
      widget: Type.Union(SOURCE_FIELD_WIDGETS.map((w) => Type.Literal(w)) as [TLiteral<SourceFieldWidget>]),
    }),
  ),
});

export const stateSourceKindDto = (d: StateSourceDescriptor) => ({
  type: d.type,
  summary: d.summary,
  settings: JSON.parse(JSON.stringify(d.settings)) as Record<string, unknown>,
  settable: d.settable,
  form: d.form.map((f) => ({ ...f })),
});
