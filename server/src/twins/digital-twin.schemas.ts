import { Type } from 'typebox';
import { FILTER_PARAM_PATTERN } from '../devices/virtual-device.filter.js';
import { KeysetQuery, ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const NullableUuid = Type.Union([Uuid, Type.Null()]);
const AddressLine = Type.String({ maxLength: 300 });
const Label = Type.String({ minLength: 1, maxLength: 100 });

export const TwinAddressBody = Type.Object(
  {
    street: Type.Optional(AddressLine),
    postalCode: Type.Optional(Type.String({ maxLength: 40 })),
    city: Type.Optional(AddressLine),
    region: Type.Optional(AddressLine),
    country: Type.Optional(AddressLine),
  },
  {
    // Further address lines (district, building …) are kept as text.
    additionalProperties: AddressLine,
    maxProperties: 20,
    description: 'Postal address; other text fields (district, building …) are kept as they are.',
  },
);

/** Any number of text fields; numbers are not coerced so a round trip keeps exactly what was sent. */
export const CustomProperties = Type.Record(
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.String({ maxLength: 2000 }),
  { description: 'Custom properties: any number of text key/value pairs (filter with filter[kv.<key>]).' },
);

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  parentId: Type.Optional(NullableUuid),
  address: Type.Optional(Type.Union([TwinAddressBody, Type.Null()])),
  latitude: Type.Optional(Type.Union([Type.Number({ minimum: -90, maximum: 90 }), Type.Null()])),
  longitude: Type.Optional(Type.Union([Type.Number({ minimum: -180, maximum: 180 }), Type.Null()])),
  referenceId: Type.Optional(
    Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
      description: 'Devices with the same referenceId are routed to this twin (dynamic data routing).',
    }),
  ),
  customProperties: Type.Optional(CustomProperties),
  tags: Type.Optional(Type.Array(Label, { maxItems: 200 })),
  useParentScope: Type.Optional(
    Type.Boolean({
      description:
        "Default true for new twins (3.2.20): the twin takes its parent's effective permission scope.",
    }),
  ),
  permissionScopeId: Type.Optional(
    Type.Union([Uuid, Type.Null()], {
      description:
        "The twin's own permission scope (a scope of its account), used when useParentScope is false or the twin is a root twin.",
    }),
  ),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('inactive')])),
  dashboardId: Type.Optional(NullableUuid),
};

export const DigitalTwinCreate = Type.Object(
  { ...fields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

/** Partial: omitted fields keep their value; states are never touched by a twin PUT. */
export const DigitalTwinUpdate = Type.Object(
  { ...fields, title: Type.Optional(fields.title) },
  // Unknown properties are stripped, so a twin as read back (hierarchy, states …) may be sent as it is.
  { additionalProperties: false },
);

export const GeocodeQuery = Type.Object(
  {
    geocode: Type.Optional(
      Type.Boolean({
        description:
          'Resolve the address to latitude/longitude with the configured geocoder (422 GEOCODER_NOT_CONFIGURED without one).',
      }),
    ),
  },
  { additionalProperties: false },
);

const TwinStateReply = Type.Object({
  id: Uuid,
  key: Type.String(),
  title: Type.String(),
  valueType: Type.String(),
  unit: Type.Union([Type.String(), Type.Null()]),
  value: Type.Unknown(),
  timestamp: Type.Union([Timestamp, Type.Null()]),
  warning: Type.Union([Type.String(), Type.Null()]),
});

export const DigitalTwinReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  parentId: Type.Union([Uuid, Type.Null()]),
  title: Type.String(),
  description: Type.String(),
  address: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  latitude: Type.Union([Type.Number(), Type.Null()]),
  longitude: Type.Union([Type.Number(), Type.Null()]),
  referenceId: Type.Union([Type.String(), Type.Null()]),
  customProperties: Type.Record(Type.String(), Type.String()),
  tags: Type.Array(Type.String()),
  useParentScope: Type.Boolean(),
  permissionScopeId: Type.Union([Uuid, Type.Null()]),
  effectivePermissionScopeId: Type.Union([Uuid, Type.Null()], {
    description:
      'The scope that decides who sees the twin: permissionScopeId, or the parent’s effective scope while useParentScope holds.',
  }),
  status: Type.String(),
  dashboardId: Type.Union([Uuid, Type.Null()]),
  hierarchy: Type.Array(Type.Object({ id: Uuid, title: Type.String() }), {
    description: 'From the root twin down to this one.',
  }),
  states: Type.Array(TwinStateReply, { description: 'The twin’s data states, by key.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const TwinStatusValue = Type.Union([Type.Literal('active'), Type.Literal('inactive')]);

const FilterValue = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }),
]);

export const DigitalTwinListQuery = Type.Object(
  {
    ...ListQuery,
    ...KeysetQuery,
    accountId: Type.Optional(Uuid),
    parentId: Type.Optional(Uuid),
    referenceId: Type.Optional(Type.String({ maxLength: 200 })),
    'filter[status]': Type.Optional(
      Type.Union([TwinStatusValue, Type.Array(TwinStatusValue, { maxItems: 2 })], {
        description: 'Only twins with this status; repeated: with any of them.',
      }),
    ),
  },
  {
    // Kept (not stripped), so a misspelt filter[…] reaches the parser and is refused with 400.
    additionalProperties: true,
    patternProperties: { [FILTER_PARAM_PATTERN]: FilterValue },
    description:
      'Filters: `filter[title]`, `filter[tag]`, `filter[kv.<custom property>]`, each also as `…[not]`; `filter[status]`.',
  },
);

export const TWIN_SAMPLE_MAX = 100;

export const TwinStatisticsQuery = Type.Object(
  {
    accountId: Type.Optional(Uuid),
    sampleSize: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: TWIN_SAMPLE_MAX,
        default: 10,
        description: 'How many twins the sample lists: the most recently changed ones.',
      }),
    ),
    includeSubAccounts: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

export const TwinStatisticsReply = Type.Object({
  accountId: Uuid,
  includeSubAccounts: Type.Boolean(),
  twins: Type.Integer(),
  twinsByStatus: Type.Record(Type.String(), Type.Integer()),
  twinsWithLocation: Type.Integer(),
  twinsWithDashboard: Type.Integer(),
  states: Type.Integer(),
  statesWithWarnings: Type.Integer(),
  sampleSize: Type.Integer(),
  sample: Type.Array(
    Type.Object({
      id: Uuid,
      accountId: Uuid,
      title: Type.String(),
      status: Type.String(),
      latitude: Type.Union([Type.Number(), Type.Null()]),
      longitude: Type.Union([Type.Number(), Type.Null()]),
      stateCount: Type.Integer(),
      warningCount: Type.Integer(),
      updatedAt: Timestamp,
    }),
  ),
});
