import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import type { AlarmStatus } from '../integration/ports.js';

export const ALARM_STATUSES: readonly AlarmStatus[] = ['open', 'acknowledged', 'closed'];

/** Severities from the least to the most severe; the rank (1…5) is what sorting uses. */
export const ALARM_SEVERITIES = ['info', 'warning', 'minor', 'major', 'critical'] as const;
export type AlarmSeverity = (typeof ALARM_SEVERITIES)[number];
export const DEFAULT_ALARM_SEVERITY: AlarmSeverity = 'warning';
export const severityRank = (s: AlarmSeverity): number => ALARM_SEVERITIES.indexOf(s) + 1;
export const isAlarmSeverity = (v: unknown): v is AlarmSeverity =>
  typeof v === 'string' && (ALARM_SEVERITIES as readonly string[]).includes(v);

/** Why an entry was closed: by someone (`manual`), by its rule's clear condition, or merged into a twin entry. */
export type AlarmCloseReason = 'manual' | 'cleared' | 'merged';

/** Category the connector monitoring writes (spec, Other resources: the German word, verbatim). */
export const CONNECTOR_MONITORING_CATEGORY = 'Konnektorüberwachung';

/**
 * One alarm: what happened (`category`, `message`), about what (`referenceType`/`referenceId`:
 * a connector, twin, device …), who wrote it (`sourceKind`/`sourceId`: a rule, monitoring rule,
 * report) and where it stands: open → acknowledged → closed (closing from open is allowed).
 * While it is not closed, a repeat occurrence from the same source about the same reference is
 * folded into it (`occurrenceCount`, `lastSeenAt`) instead of writing a new entry.
 */
/** The partial unique index behind deduplication: one entry not closed per source and reference. */
export const OPEN_SOURCE_UNIQUE = 'alarm_logs_open_source_unique';
/** Stands for "no reference" in that index (NULLs would never conflict). */
export const NO_REFERENCE = '00000000-0000-0000-0000-000000000000';

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
  severity: AlarmSeverity = DEFAULT_ALARM_SEVERITY;
  /** `severity` as a number (info 1 … critical 5) so lists sort by how severe, not alphabetically. */
  severityRank = severityRank(DEFAULT_ALARM_SEVERITY);
  occurrenceCount = 1;
  lastSeenAt: Date = new Date();
  closeReason: AlarmCloseReason | null = null;
  /** What closed the entry automatically (`{kind:'rule', id}`); null when a principal closed it. */
  clearedByKind: string | null = null;
  clearedById: string | null = null;
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
  indexes: [
    { properties: ['account', 'createdAt'] },
    { properties: ['referenceType', 'referenceId'] },
    { properties: ['account', 'severityRank'] },
  ],
  uniques: [
    {
      name: OPEN_SOURCE_UNIQUE,
      expression: `create unique index "${OPEN_SOURCE_UNIQUE}" on "alarm_logs" ("account_id", "source_kind", "source_id", coalesce("reference_type", ''), coalesce("reference_id", '${NO_REFERENCE}'::uuid)) where "status" <> 'closed' and "source_kind" is not null and "source_id" is not null`,
    },
  ],
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
    severity: { type: 'string', length: 20, default: DEFAULT_ALARM_SEVERITY },
    severityRank: { type: 'smallint', default: severityRank(DEFAULT_ALARM_SEVERITY) },
    occurrenceCount: { type: 'integer', default: 1 },
    lastSeenAt: { type: 'datetime', columnType: 'timestamptz' },
    closeReason: { type: 'string', length: 20, nullable: true },
    clearedByKind: { type: 'string', length: 40, nullable: true },
    clearedById: { type: 'uuid', nullable: true },
    acknowledgedBy: { type: 'uuid', nullable: true },
    acknowledgedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    closedBy: { type: 'uuid', nullable: true },
    closedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    details: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
