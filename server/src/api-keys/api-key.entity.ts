import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/** The clear key is shown once; only its SHA-256 is stored (it carries 256 random bits). */
export class ApiKey {
  id: string = newId();
  account!: Account;
  title!: string;
  /** First characters of the key, so people can tell their keys apart. */
  prefix!: string;
  keyHash!: string;
  permissions: string[] = [];
  active = true;
  createdByUserId: string | null = null;
  lastUsedAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  class: ApiKey,
  tableName: 'api_keys',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    prefix: { type: 'string', length: 16 },
    keyHash: { type: 'string', length: 64, unique: true, hidden: true },
    permissions: { type: 'text[]' },
    active: { type: 'boolean', default: true },
    createdByUserId: { type: 'uuid', nullable: true },
    lastUsedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
