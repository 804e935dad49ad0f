import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/** A named set of permissions. Built-in roles have no account and are offered to every account. */
export class Role {
  id: string = newId();
  account: Account | null = null;
  name!: string;
  description = '';
  permissions: string[] = [];
  builtIn = false;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const RoleSchema = new EntitySchema<Role>({
  class: Role,
  tableName: 'roles',
  uniques: [{ properties: ['account', 'name'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, nullable: true, deleteRule: 'cascade', index: true },
    name: { type: 'string', length: 100 },
    description: { type: 'text' },
    permissions: { type: 'text[]' },
    builtIn: { type: 'boolean', default: false },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
