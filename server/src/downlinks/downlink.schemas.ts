import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { MAX_DOWNLINK_BYTES, MAX_F_PORT, MIN_F_PORT } from './downlink-payload.js';

export const DownlinkCreate = Type.Object(
  {
    fPort: Type.Optional(
      Type.Integer({
        minimum: MIN_F_PORT,
        maximum: MAX_F_PORT,
        description:
          'LoRaWAN FPort: required by LoRaWAN network servers (with `data` it may come from the codec), ignored by connectors that carry none',
      }),
    ),
    bytes: Type.Optional(
      Type.String({
        maxLength: MAX_DOWNLINK_BYTES * 2 + 200,
        description:
          'The payload, written as `encoding` says (hex by default). Exactly one of bytes and data.',
        examples: ['01a4'],
      }),
    ),
    encoding: Type.Optional(
      Type.Union([Type.Literal('hex'), Type.Literal('base64')], {
        description:
          'How `bytes` is written (default hex). Said, never guessed: hex digits are valid base64 as well.',
      }),
    ),
    data: Type.Optional(
      Type.Unknown({
        description:
          "Encoded by the device driver's TS013 codec (`encodeDownlink({data})`); its errors are a 422 DOWNLINK_ENCODE_FAILED",
      }),
    ),
    confirmed: Type.Optional(
      Type.Boolean({ default: false, description: 'Ask the device to acknowledge it' }),
    ),
  },
  { additionalProperties: false },
);

export const DownlinkReply = Type.Object({
  id: Uuid,
  deviceId: Uuid,
  connectorId: Uuid,
  fPort: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Null where the connector carries no fPort',
  }),
  bytesHex: Type.String(),
  bytesBase64: Type.String(),
  confirmed: Type.Boolean(),
  status: Type.Union(
    [Type.Literal('queued'), Type.Literal('sent'), Type.Literal('acknowledged'), Type.Literal('failed')],
    {
      description: 'queued → sent → acknowledged | failed',
    },
  ),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it failed; while queued, the last transient failure it is retried after',
  }),
  remoteId: Type.Union([Type.String(), Type.Null()], { description: "The network server's id of the item" }),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  handedOverAt: Type.Union([Timestamp, Type.Null()]),
  sentAt: Type.Union([Timestamp, Type.Null()]),
  acknowledgedAt: Type.Union([Timestamp, Type.Null()]),
  createdBy: Type.Union([Type.String(), Type.Null()]),
});

export const DownlinkListQuery = Type.Object(
  { page: ListQuery.page, pageSize: ListQuery.pageSize },
  { additionalProperties: false },
);
