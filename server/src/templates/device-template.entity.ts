import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { DeviceDriver, type HealthConfig } from '../drivers/device-driver.entity.js';

/** Settings shared by many devices; changes are synchronised to the linked devices. */
export class DeviceTemplate {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  driver: DeviceDriver | null = null;
  connectorType: string | null = null;
  tags: string[] = [];
  /** Groups the template manages on its devices: they cannot be removed from a device. */
  groups: string[] = [];
  keyValueData: Record<string, unknown> = {};
  healthConfig: HealthConfig | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const DeviceTemplateSchema = new EntitySchema<DeviceTemplate>({
  class: DeviceTemplate,
  tableName: 'device_templates',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    driver: { kind: 'm:1', entity: () => DeviceDriver, nullable: true, deleteRule: 'restrict', index: true },
    connectorType: { type: 'string', length: 40, nullable: true },
    tags: { type: 'text[]' },
    groups: { type: 'text[]' },
    keyValueData: { type: 'json' },
    healthConfig: { type: 'json', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
