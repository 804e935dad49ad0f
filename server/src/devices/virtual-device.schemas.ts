import { Type } from 'typebox';
import { ValueTypeSchema } from '../drivers/device-driver.schemas.js';
import { KeysetQuery, ListMeta, ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { FILTER_PARAM_PATTERN } from './virtual-device.filter.js';

const NullableUuid = Type.Union([Uuid, Type.Null()]);
const NullableText = Type.Union([Type.String({ maxLength: 200 }), Type.Null()]);
const Label = Type.String({ minLength: 1, maxLength: 100 });
/** Numbers, booleans and any text (special characters included) are accepted as values. */
const KeyValueData = Type.Record(
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean(), Type.Null()]),
);
const HealthConfigBody = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
  description:
    'Health rules `{rules: [{state, operator, value?, result}], silentAfterSeconds?}`; `_raw` and `_parsed` are valid states.',
});

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  active: Type.Optional(
    Type.Boolean({
      description:
        'Default true. false: packets of the device are kept in its history (status `device-inactive`) but not parsed or routed.',
    }),
  ),
  connectorId: Type.Optional(NullableUuid),
  deviceDriverId: Type.Optional(NullableUuid),
  deviceTemplateId: Type.Optional(NullableUuid),
  parentId: Type.Optional(NullableUuid),
  permissionScopeId: Type.Optional(NullableUuid),
  tags: Type.Optional(Type.Array(Label, { maxItems: 200 })),
  groups: Type.Optional(Type.Array(Label, { maxItems: 200 })),
  keyValueData: Type.Optional(KeyValueData),
  externalId: Type.Optional(NullableText),
  referenceId: Type.Optional(NullableText),
  targetReferenceId: Type.Optional(NullableText),
  operationalStatus: Type.Optional(
    Type.Union([Type.Integer({ minimum: -2147483648, maximum: 2147483647 }), Type.Null()], {
      description: 'Integer only: 1.5 or "1" are refused.',
    }),
  ),
  activationMethod: Type.Optional(
    Type.Union([Type.Literal('OTAA'), Type.Literal('ABP')], { description: 'Default OTAA.' }),
  ),
  skipFrameCounterCheck: Type.Optional(Type.Boolean()),
  devEui: Type.Optional(Type.Union([Type.String({ pattern: '^[0-9A-Fa-f]{16}$' }), Type.Null()])),
  // The column holds 100 characters (virtual-device.entity.ts).
  endDeviceId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  application_session_key: Type.Optional(
    Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
      description: 'Write-only. Omitted, null or empty: the stored key is kept.',
    }),
  ),
  network_session_key: Type.Optional(
    Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
      description: 'Write-only. Omitted, null or empty: the stored key is kept.',
    }),
  ),
  healthConfig: Type.Optional(HealthConfigBody),
};

export const VirtualDeviceCreate = Type.Object(
  { device_id: Type.String({ minLength: 1, maxLength: 200 }), ...fields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const VirtualDeviceUpdate = Type.Object(
  {
    device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...fields,
    title: Type.Optional(fields.title),
    reactivate: Type.Optional(
      Type.Boolean({ description: 'true: back from Deleting or a failed remote deletion' }),
    ),
  },
  { additionalProperties: false },
);

export const VirtualDeviceReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  device_id: Type.String(),
  title: Type.String(),
  active: Type.Boolean(),
  description: Type.String(),
  connectorId: NullableUuid,
  deviceDriverId: NullableUuid,
  deviceTemplateId: NullableUuid,
  parentId: NullableUuid,
  permissionScopeId: NullableUuid,
  tags: Type.Array(Type.String()),
  groups: Type.Array(Type.String()),
  keyValueData: Type.Record(Type.String(), Type.Unknown()),
  externalId: Type.Union([Type.String(), Type.Null()]),
  referenceId: Type.Union([Type.String(), Type.Null()]),
  targetReferenceId: Type.Union([Type.String(), Type.Null()]),
  operationalStatus: Type.Union([Type.Integer(), Type.Null()]),
  activationMethod: Type.String(),
  skipFrameCounterCheck: Type.Boolean(),
  devEui: Type.Union([Type.String(), Type.Null()]),
  endDeviceId: Type.Union([Type.String(), Type.Null()]),
  hasApplicationSessionKey: Type.Boolean(),
  hasNetworkSessionKey: Type.Boolean(),
  healthState: Type.String(),
  healthReason: Type.Union([Type.String(), Type.Null()]),
  healthCheckedAt: Type.Union([Timestamp, Type.Null()]),
  healthConfig: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  lastSeen: Type.Union([Timestamp, Type.Null()]),
  lifecycleState: Type.Union([Type.String(), Type.Null()], {
    description:
      '`Deleting` while the network server removes it; `DeletionFailed` (with lifecycleReason) when it could not',
  }),
  lifecycleReason: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const FilterValue = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }),
]);

export const VirtualDeviceListQuery = Type.Object(
  {
    ...ListQuery,
    ...KeysetQuery,
    accountId: Type.Optional(Uuid),
    connectorId: Type.Optional(Uuid),
    deviceTemplateId: Type.Optional(Uuid),
    deviceDriverId: Type.Optional(Uuid),
    parentId: Type.Optional(Uuid),
    healthState: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'Devices in this health state (`Unknown`: also every device without a packet yet).',
      }),
    ),
  },
  {
    // Kept (not stripped), so a misspelt filter[…] reaches parseDeviceFilter and is refused with 400.
    additionalProperties: true,
    patternProperties: { [FILTER_PARAM_PATTERN]: FilterValue },
    description:
      'Filters: `filter[title]`, `filter[tag]`, `filter[kv.<key>]`, each also as `…[not]`. `searchItems` matches title, `device_id`, `devEui` and `externalId` (case-insensitive, part of the text).',
  },
);

export const DeviceFilterBody = Type.Record(Type.String({ pattern: FILTER_PARAM_PATTERN }), FilterValue, {
  description: 'The list filters as an object: `{"filter[tag]": "a", "filter[kv.room][not]": "12"}`.',
});

export const BulkEditBody = Type.Object(
  {
    ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000 }),
    set: Type.Object(
      {
        description: fields.description,
        deviceDriverId: fields.deviceDriverId,
        deviceTemplateId: fields.deviceTemplateId,
        parentId: fields.parentId,
        permissionScopeId: fields.permissionScopeId,
        tags: fields.tags,
        groups: fields.groups,
        keyValueData: fields.keyValueData,
        operationalStatus: fields.operationalStatus,
        activationMethod: fields.activationMethod,
        skipFrameCounterCheck: fields.skipFrameCounterCheck,
        healthConfig: fields.healthConfig,
      },
      {
        additionalProperties: false,
        description: 'keyValueData is merged into each device; other fields replace.',
      },
    ),
  },
  { additionalProperties: false },
);

export const BulkDeleteTagsBody = Type.Object(
  {
    tags: Type.Array(Label, { minItems: 1, maxItems: 200 }),
    ids: Type.Optional(Type.Array(Uuid, { maxItems: 10000 })),
    filter: Type.Optional(DeviceFilterBody),
    searchItems: Type.Optional(Type.String({ maxLength: 200 })),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const UpdatedReply = Type.Object({ updated: Type.Integer() });

export const StatisticsQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date' })),
    to: Type.Optional(Type.String({ format: 'date' })),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const StatisticsReply = Type.Object({
  accountId: Uuid,
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  total: Type.Integer(),
  createdInRange: Type.Integer(),
  createdPerDay: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Type.Integer() })),
});

export const DeviceStateReply = Type.Object({
  key: Type.String(),
  value: Type.Unknown(),
  timestamp: Timestamp,
  packetId: Type.Union([Type.String(), Type.Null()]),
  valueType: Type.Union([ValueTypeSchema, Type.Null()], {
    description:
      "The type the device's driver declares for this key (its target variable); null for keys it does not declare (`_raw`, `_parsed`, `_meta.*`)",
  }),
  unit: Type.Union([Type.String(), Type.Null()], {
    description: "The target variable's unit; null when none",
  }),
  warning: Type.Union([Type.String(), Type.Null()], {
    description:
      'Set when the value does not fit `valueType` (text where a number is declared, …); the value is kept as received',
  }),
});

/** What the device's driver declares for one key (a target variable), whether or not the device sent it. */
export const DeclaredKeyReply = Type.Object({
  key: Type.String(),
  valueType: ValueTypeSchema,
  unit: Type.Union([Type.String(), Type.Null()], {
    description: "The target variable's unit; null when none",
  }),
});

export const DeviceStateListReply = Type.Object({
  data: Type.Array(DeviceStateReply),
  meta: ListMeta,
  declared: Type.Array(DeclaredKeyReply, {
    description:
      "Every key the device's driver declares (its target variables), also those the device has not sent yet; empty without a driver",
  }),
});

export const ValueMismatchReply = Type.Object({
  key: Type.String(),
  value: Type.Unknown({ description: 'The value as the packet carries it' }),
  valueType: ValueTypeSchema,
  warning: Type.String({ description: 'The same warning a device state with this value carries' }),
});

export const PacketReply = Type.Object({
  id: Type.String(),
  receivedAt: Timestamp,
  source: Type.String(),
  status: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  warnings: Type.Array(Type.String(), {
    description: "The `warnings` of the driver's payload codec (TS013) for a packet that decoded",
  }),
  meta: Type.Union([PacketMetaReply(), Type.Null()], {
    description:
      'What the connector knew about the packet besides its bytes: network-server metadata (fPort, fCnt, gateways with RSSI/SNR, data rate, …) or the MQTT topic; null when none',
  }),
  mismatches: Type.Union([Type.Array(ValueMismatchReply), Type.Null()], {
    description:
      "The packet's values that do not fit the type the device's driver declares for their key, checked on read with the driver as it is now; empty when all fit; null when not checked (the packet did not parse, the read's time budget for parsing ran out, or the driver's parser is a script, which never runs on the broker's thread)",
  }),
  payloadText: Type.Union([Type.String(), Type.Null()], {
    description: 'The payload when it is UTF-8 text.',
  }),
  payloadBase64: Type.String(),
});

/** packet-meta.ts's PacketMeta; further fields a newer kind adds pass through. */
function PacketMetaReply() {
  const location = Type.Object(
    {
      latitude: Type.Number(),
      longitude: Type.Number(),
      altitude: Type.Optional(Type.Number()),
      source: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  );
  return Type.Object(
    {
      event: Type.Optional(
        Type.String({ description: '`uplink` (also when absent), `join`, `status`, `location`' }),
      ),
      topic: Type.Optional(Type.String()),
      fPort: Type.Optional(Type.Integer()),
      fCnt: Type.Optional(Type.Integer()),
      devEui: Type.Optional(Type.String()),
      devAddr: Type.Optional(Type.String()),
      confirmed: Type.Optional(Type.Boolean()),
      receivedAt: Type.Optional(Type.String({ description: "The network server's receive time" })),
      gateways: Type.Optional(
        Type.Array(
          Type.Object(
            {
              gatewayId: Type.Optional(Type.String()),
              gatewayEui: Type.Optional(Type.String()),
              rssi: Type.Optional(Type.Number()),
              snr: Type.Optional(Type.Number()),
              location: Type.Optional(location),
            },
            { additionalProperties: true },
          ),
        ),
      ),
      dataRate: Type.Optional(Type.Union([Type.String(), Type.Number()])),
      spreadingFactor: Type.Optional(Type.Number()),
      bandwidth: Type.Optional(Type.Number()),
      frequency: Type.Optional(Type.Number()),
      codingRate: Type.Optional(Type.String()),
      decoded: Type.Optional(Type.Unknown()),
      battery: Type.Optional(Type.Number()),
      margin: Type.Optional(Type.Number()),
      location: Type.Optional(location),
      fields: Type.Optional(
        Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
          description:
            "A field protocol's own metadata (IEC 104 address and quality, OPC UA node id, LwM2M path, Modbus register)",
        }),
      ),
    },
    { additionalProperties: true },
  );
}

export const PacketListQuery = Type.Object(
  { page: ListQuery.page, pageSize: ListQuery.pageSize },
  { additionalProperties: false },
);

export const PacketListReply = Type.Object({
  data: Type.Array(PacketReply),
  meta: Type.Object({
    page: Type.Integer(),
    pageSize: Type.Integer(),
    total: Type.Integer(),
    limit: Type.Integer({ description: 'Packets the history keeps per device.' }),
    maximumReached: Type.Boolean({ description: 'Older packets exist beyond the history limit.' }),
  }),
});

export const ImportBody = Type.Object(
  { csv: Type.String({ minLength: 1 }), accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const ImportQuery = Type.Object({ accountId: Type.Optional(Uuid) }, { additionalProperties: false });

export const DeleteRemotelyParams = Type.Object({ id: Uuid, flag: Type.Boolean() });
