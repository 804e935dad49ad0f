import { Type } from 'typebox';
import { Timestamp, Uuid } from '../platform/http/schemas.js';

export const PublicKeyStatus = Type.Object({
  published: Type.Boolean(),
  keyPrefix: Type.Union([Type.String(), Type.Null()], { description: 'First characters of the current key' }),
  issuedAt: Type.Union([Timestamp, Type.Null()]),
});

export const IssuedPublicKey = Type.Object({
  published: Type.Literal(true),
  key: Type.String({ description: 'The clear key: shown this once, only its hash is stored' }),
  keyPrefix: Type.String(),
  issuedAt: Timestamp,
  url: Type.String({ description: 'The share link: the public view with the key in its fragment' }),
});

const PublicTwin = Type.Object({
  id: Uuid,
  title: Type.String(),
  latitude: Type.Union([Type.Number(), Type.Null()]),
  longitude: Type.Union([Type.Number(), Type.Null()]),
});

export const PublicDashboardReply = Type.Object({
  id: Uuid,
  title: Type.String(),
  description: Type.String(),
  layout: Type.Object({
    version: Type.Literal(1),
    widgets: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  }),
  twins: Type.Array(PublicTwin),
  states: Type.Array(
    Type.Object({
      id: Uuid,
      twinId: Uuid,
      key: Type.String(),
      title: Type.String(),
      valueType: Type.String(),
      unit: Type.Union([Type.String(), Type.Null()]),
      value: Type.Unknown(),
      timestamp: Type.Union([Timestamp, Type.Null()]),
      warning: Type.Union([Type.String(), Type.Null()]),
      meta: Type.Object({ visual: Type.Optional(Type.Unknown()) }),
    }),
  ),
  maps: Type.Record(Type.String(), Type.Array(PublicTwin), {
    description: 'Per map widget id: the located twins it draws',
  }),
});
