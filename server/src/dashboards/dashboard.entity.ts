import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/** A grid of widgets, saved per account (widgets and public sharing come with the console). */
export class Dashboard {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  /** Widget grid as the console saves it. */
  layout: Record<string, unknown> = {};
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const DashboardSchema = new EntitySchema<Dashboard>({
  class: Dashboard,
  tableName: 'dashboards',
  indexes: [{ properties: ['account', 'title'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    layout: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
