import { EntitySchema } from '@mikro-orm/core';
import { Account } from '../accounts/account.entity.js';
import { newId } from '../platform/crypto/ids.js';

/** A corner as `[longitude, latitude]`. */
export type Corner = [number, number];
/** Top-left, top-right, bottom-right, bottom-left of the image: MapLibre's image-source order. */
export type Corners = [Corner, Corner, Corner, Corner];

export type SitePlanImageType = 'image/png' | 'image/jpeg' | 'image/webp';

/**
 * A site plan of an account: a raster image drawn on the twins map between its four corners, under
 * the markers, from `minZoom` on. The image itself is a row of `site_plan_images`, so lists never
 * load it; a plan without corners or image is listed but not drawn.
 */
export class SitePlan {
  id: string = newId();
  account!: Account;
  title!: string;
  corners: Corners | null = null;
  opacity = 0.85;
  minZoom = 15;
  imageType: SitePlanImageType | null = null;
  imageBytes: number | null = null;
  imageUpdatedAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export class SitePlanImage {
  sitePlan!: SitePlan;
  content!: Buffer;
}

export const SitePlanSchema = new EntitySchema<SitePlan>({
  class: SitePlan,
  tableName: 'site_plans',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    corners: { type: 'json', nullable: true },
    opacity: { type: 'double' },
    minZoom: { type: 'double' },
    imageType: { type: 'string', length: 16, nullable: true },
    imageBytes: { type: 'integer', nullable: true },
    imageUpdatedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

export const SitePlanImageSchema = new EntitySchema<SitePlanImage>({
  class: SitePlanImage,
  tableName: 'site_plan_images',
  properties: {
    sitePlan: { kind: '1:1', entity: () => SitePlan, primary: true, owner: true, deleteRule: 'cascade' },
    content: { type: 'blob', columnType: 'bytea' },
  },
});
