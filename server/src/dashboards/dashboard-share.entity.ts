import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Dashboard } from './dashboard.entity.js';

/**
 * A published dashboard: the key its public view opens it with. One per dashboard; rotating
 * replaces the key, revoking deletes the row. Only the key's SHA-256 is stored (256 random bits);
 * the clear key is shown once.
 */
export class DashboardShare {
  id: string = newId();
  dashboard!: Dashboard;
  /** First characters of the key, so owners can tell which link is out there. */
  prefix!: string;
  keyHash!: string;
  createdByUserId: string | null = null;
  /** When the current key was issued (publish or rotate). */
  issuedAt: Date = new Date();
  createdAt: Date = new Date();
}

export const DashboardShareSchema = new EntitySchema<DashboardShare>({
  class: DashboardShare,
  tableName: 'dashboard_shares',
  properties: {
    id: { type: 'uuid', primary: true },
    dashboard: { kind: '1:1', entity: () => Dashboard, owner: true, deleteRule: 'cascade', unique: true },
    prefix: { type: 'string', length: 16 },
    keyHash: { type: 'string', length: 64, unique: true, hidden: true },
    createdByUserId: { type: 'uuid', nullable: true },
    issuedAt: { type: 'datetime', columnType: 'timestamptz' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
