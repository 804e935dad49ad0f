import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Corner = Type.Tuple(
  [Type.Number({ minimum: -180, maximum: 180 }), Type.Number({ minimum: -85.05, maximum: 85.05 })],
  { description: '[longitude, latitude]' },
);

const Corners = Type.Tuple([Corner, Corner, Corner, Corner], {
  description:
    'Where the image’s top-left, top-right, bottom-right and bottom-left corners lie (MapLibre image-source order).',
});

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  corners: Type.Union([Corners, Type.Null()], { description: 'Null: not placed yet, so not drawn.' }),
  opacity: Type.Number({ minimum: 0, maximum: 1, description: 'Default 0.85.' }),
  minZoom: Type.Number({ minimum: 0, maximum: 24, description: 'Drawn from this zoom on; default 15.' }),
};

export const SitePlanCreate = Type.Object(
  {
    title: fields.title,
    corners: Type.Optional(fields.corners),
    opacity: Type.Optional(fields.opacity),
    minZoom: Type.Optional(fields.minZoom),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const SitePlanUpdate = Type.Partial(Type.Object(fields, { additionalProperties: false }));

export const SitePlanListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const SitePlanReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  corners: fields.corners,
  opacity: Type.Number(),
  minZoom: Type.Number(),
  image: Type.Union([
    Type.Object({
      type: Type.String(),
      bytes: Type.Integer(),
      updatedAt: Timestamp,
      url: Type.String({ description: 'Where the image is read (same origin, signed-in callers).' }),
    }),
    Type.Null(),
  ]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
