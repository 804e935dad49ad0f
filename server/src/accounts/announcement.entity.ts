import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from './account.entity.js';
import { User } from '../users/user.entity.js';

export type AnnouncementSeverity = 'info' | 'warning' | 'critical';

/** Shown to users of the account and of every sub-account. */
export class Announcement {
  id: string = newId();
  account!: Account;
  title!: string;
  message!: string;
  severity: AnnouncementSeverity = 'info';
  active = true;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const AnnouncementSchema = new EntitySchema<Announcement>({
  class: Announcement,
  tableName: 'announcements',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    message: { type: 'text' },
    severity: { type: 'string', length: 16 },
    active: { type: 'boolean', default: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/** Per-user state of an announcement, also for announcements inherited from a parent account. */
export class AnnouncementState {
  id: string = newId();
  announcement!: Announcement;
  user!: User;
  dismissed = false;
  updatedAt: Date = new Date();
}

export const AnnouncementStateSchema = new EntitySchema<AnnouncementState>({
  class: AnnouncementState,
  tableName: 'announcement_states',
  uniques: [{ properties: ['announcement', 'user'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    announcement: { kind: 'm:1', entity: () => Announcement, deleteRule: 'cascade' },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    dismissed: { type: 'boolean', default: false },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
