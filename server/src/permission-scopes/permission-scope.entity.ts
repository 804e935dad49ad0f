import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/** An access area: twins and devices carry one, and users restricted to scopes see only those. */
export class PermissionScope {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const PermissionScopeSchema = new EntitySchema<PermissionScope>({
  class: PermissionScope,
  tableName: 'permission_scopes',
  uniques: [{ properties: ['account', 'title'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
