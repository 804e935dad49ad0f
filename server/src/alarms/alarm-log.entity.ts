import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import type { AlarmStatus } from '../integration/ports.js';

export const ALARM_STATUSES: readonly AlarmStatus[] = ['open', 'acknowledged', 'closed'];

/** Category the connector monitoring writes (spec, Other resources: the German word, verbatim). */
export const CONNECTOR_MONITORING_CATEGORY = 'Konnektorüberwachung';

/**
 * One alarm: what happened (`category`, `message`), about what (`referenceType`/`referenceId`:
 * a connector, twin, device …), who wrote it (`sourceKind`/`sourceId`: a rule, monitoring rule,
 * report) and where it stands: open → acknowledged → closed (closing from open is allowed).
 */
export class AlarmLog {
  id: string = newId();
  account!: Account;
  category!: string;
  message!: string;
  referenceType: string | null = null;
  referenceId: string | null = null;
  sourceKind: string | null = null;
  sourceId: string | null = null;
  status: AlarmStatus = 'open';
  /** Principal id (user or API key) that acknowledged / closed the entry. */
  acknowledgedBy: string | null = null;
  acknowledgedAt: Date | null = null;
  closedBy: string | null = null;
  closedAt: Date | null = null;
  details: Record<string, unknown> = {};
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const AlarmLogSchema = new EntitySchema<AlarmLog>({
  class: AlarmLog,
  tableName: 'alarm_logs',
  indexes: [{ properties: ['account', 'createdAt'] }, { properties: ['referenceType', 'referenceId'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    category: { type: 'string', length: 100 },
    message: { type: 'text' },
    referenceType: { type: 'string', length: 40, nullable: true },
    referenceId: { type: 'uuid', nullable: true },
    sourceKind: { type: 'string', length: 40, nullable: true },
    sourceId: { type: 'uuid', nullable: true },
    status: { type: 'string', length: 20 },
    acknowledgedBy: { type: 'uuid', nullable: true },
    acknowledgedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    closedBy: { type: 'uuid', nullable: true },
    closedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    details: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
