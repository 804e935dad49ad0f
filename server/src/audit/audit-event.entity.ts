import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/** Who did it: a user, an API key, or the server itself (CLI commands, background work). */
export type AuditActorKind = 'user' | 'apiKey' | 'system';

/**
 * One security-relevant act, append-only: when, in which account, by whom, what (`action`, e.g.
 * `account.oauthConfig.change`), on what (`targetType`/`targetId`) and details without secrets.
 */
export class AuditEvent {
  id: string = newId();
  occurredAt: Date = new Date();
  account!: Account;
  actorKind!: AuditActorKind;
  /** The user or API key; null for `system`. */
  actorId: string | null = null;
  /** The actor's home account, so readers below it see that someone above acted, not who. */
  actorAccountId: string | null = null;
  action!: string;
  targetType: string | null = null;
  targetId: string | null = null;
  details: Record<string, unknown> = {};
}

export const AuditEventSchema = new EntitySchema<AuditEvent>({
  class: AuditEvent,
  tableName: 'audit_events',
  indexes: [{ properties: ['account', 'occurredAt'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    occurredAt: { type: 'datetime', columnType: 'timestamptz' },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    actorKind: { type: 'string', length: 16 },
    actorId: { type: 'uuid', nullable: true },
    actorAccountId: { type: 'uuid', nullable: true },
    action: { type: 'string', length: 100 },
    targetType: { type: 'string', length: 40, nullable: true },
    targetId: { type: 'string', length: 100, nullable: true },
    details: { type: 'json' },
  },
});
