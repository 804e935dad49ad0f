import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const HubDeviceFields = {
  id: Uuid,
  accountId: Uuid,
  device_id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  connectorId: Type.Union([Uuid, Type.Null()]),
  tags: Type.Array(Type.String()),
  healthState: Type.String(),
  lastSeen: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
};

export const HubDevice = Type.Object(HubDeviceFields);

export const HubDeviceWithStates = Type.Object({
  ...HubDeviceFields,
  states: Type.Array(Type.Object({ key: Type.String(), value: Type.Unknown(), timestamp: Timestamp }), {
    description: 'Current device states (`_raw`, `_parsed`, target variables)',
  }),
});

export const HubDeviceListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });

export const HubDataBody = Type.Union(
  [Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())],
  { description: 'A JSON object or an array of at most 50; stored as one packet of the device' },
);

export const HubDataReply = Type.Object({ accepted: Type.Integer() });
