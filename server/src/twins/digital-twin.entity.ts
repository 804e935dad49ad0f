import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { Dashboard } from '../dashboards/dashboard.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';

/** A postal address; coordinates come with it or from the (optional) geocoder. */
export interface TwinAddress {
  street?: string;
  postalCode?: string;
  city?: string;
  region?: string;
  country?: string;
  [key: string]: unknown;
}

export type TwinStatus = 'active' | 'inactive';

/** A hierarchical object (site, building, pump …) with data states, a place on the map and a dashboard. */
export class DigitalTwin {
  id: string = newId();
  account!: Account;
  parent: DigitalTwin | null = null;
  /** Ids from the root twin down to and including this one: hierarchy filters are one `= ANY(path)`. */
  path: string[] = [];
  title!: string;
  description = '';
  address: TwinAddress | null = null;
  latitude: number | null = null;
  longitude: number | null = null;
  /** Devices with the same `referenceId` are routed to this twin (dynamic data routing). */
  referenceId: string | null = null;
  customProperties: Record<string, string> = {};
  tags: string[] = [];
  /** Spec 3.2.20: true for new twins. True: the twin takes its parent's effective scope. */
  useParentScope = true;
  /** The twin's own permission scope: what it has when `useParentScope` is false or it is a root twin. */
  permissionScope: PermissionScope | null = null;
  /**
   * The scope that decides who sees the twin (docs/permission-scopes.md), derived from the own
   * scopes and flags along `path` and stored so lists filter on one indexed column. Written only
   * by TwinScopes (twin-scopes.ts), in the same transaction as the change it follows.
   */
  effectivePermissionScope: PermissionScope | null = null;
  status: TwinStatus = 'active';
  dashboard: Dashboard | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const DigitalTwinSchema = new EntitySchema<DigitalTwin>({
  class: DigitalTwin,
  tableName: 'digital_twins',
  indexes: [
    // The list's orders and title search (platform/http/list-sql.ts, docs/adr/0121-lists-at-scale.md).
    {
      name: 'digital_twins_list_title',
      expression:
        'create index "digital_twins_list_title" on "digital_twins" ("account_id", lower("title") nulls first, "id") include ("title")',
    },
    {
      name: 'digital_twins_list_created_at',
      expression:
        'create index "digital_twins_list_created_at" on "digital_twins" ("account_id", "created_at" nulls first, "id")',
    },
    {
      name: 'digital_twins_list_updated_at',
      expression:
        'create index "digital_twins_list_updated_at" on "digital_twins" ("account_id", "updated_at" nulls first, "id")',
    },
    {
      name: 'digital_twins_custom_properties',
      expression:
        'create index "digital_twins_custom_properties" on "digital_twins" using gin ("custom_properties" jsonb_path_ops)',
    },
    {
      name: 'digital_twins_tags',
      expression: 'create index "digital_twins_tags" on "digital_twins" using gin ("tags")',
    },
    {
      name: 'digital_twins_search',
      expression: 'create index "digital_twins_search" on "digital_twins" using gin ("title" gin_trgm_ops)',
    },
    { properties: ['referenceId'] },
  ],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    parent: { kind: 'm:1', entity: () => DigitalTwin, nullable: true, deleteRule: 'set null', index: true },
    path: { type: 'text[]', columnType: 'uuid[]' },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    address: { type: 'json', nullable: true },
    latitude: { type: 'double', nullable: true },
    longitude: { type: 'double', nullable: true },
    referenceId: { type: 'string', length: 200, nullable: true },
    customProperties: { type: 'json' },
    tags: { type: 'text[]' },
    useParentScope: { type: 'boolean', default: true },
    // Restrict, as on devices: a scope still given to twins is not deleted (409 DELETE_BLOCKED).
    permissionScope: {
      kind: 'm:1',
      entity: () => PermissionScope,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    effectivePermissionScope: {
      kind: 'm:1',
      entity: () => PermissionScope,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    status: { type: 'string', length: 20 },
    dashboard: { kind: 'm:1', entity: () => Dashboard, nullable: true, deleteRule: 'set null', index: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
