import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { User } from './user.entity.js';

/**
 * A one-time link that lets a new user set their password. The link carries 256 random bits;
 * only their SHA-256 is stored, so a database dump cannot be turned into working links.
 */
export class UserInvitation {
  id: string = newId();
  user!: User;
  tokenHash!: string;
  expiresAt!: Date;
  acceptedAt: Date | null = null;
  createdAt: Date = new Date();
}

export const UserInvitationSchema = new EntitySchema<UserInvitation>({
  class: UserInvitation,
  tableName: 'user_invitations',
  properties: {
    id: { type: 'uuid', primary: true },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    tokenHash: { type: 'string', length: 64, unique: true, hidden: true },
    expiresAt: { type: 'datetime', columnType: 'timestamptz' },
    acceptedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
