import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { Connector } from '../connectors/connector.entity.js';
import type { Schedule } from '../platform/schedule.js';

export type SmartGroupTarget = 'device' | 'twin';

/**
 * A saved filter over the devices or the twins of an account, in the list filter syntax
 * (`{"filter[tag]": "pump", "filter[kv.floor][not]": "2"}`, docs/virtual-devices.md): its members
 * are whatever matches at the time it is used.
 */
export class SmartGroup {
  id: string = newId();
  account!: Account;
  title!: string;
  target: SmartGroupTarget = 'device';
  filter: Record<string, string | string[]> = {};
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const SmartGroupSchema = new EntitySchema<SmartGroup>({
  class: SmartGroup,
  tableName: 'smart_groups',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    target: { type: 'string', length: 20 },
    filter: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/** The outcome of one report run. */
export interface AlarmReportResult {
  at: string;
  trigger: 'schedule' | 'manual';
  target: SmartGroupTarget;
  members: number;
  inAlarm: Array<{ id: string; title: string; healthState?: string; openAlarms: number }>;
  mail: 'none' | 'queued' | 'not-queued' | 'failed';
}

/** Which members of a smart group are in an alarm state, on a schedule and on demand. */
export class AlarmReport {
  id: string = newId();
  account!: Account;
  smartGroup!: SmartGroup;
  title!: string;
  /** A cron expression or an interval, in the account's time zone; null: on demand only. */
  schedule: Schedule | null = null;
  /** Device health states that count as an alarm (besides open alarm log entries). */
  alarmHealthStates: string[] = ['Warning', 'Critical', 'Error', 'Alarm'];
  mailConnector: Connector | null = null;
  mailTo: string[] = [];
  /**
   * The permission scopes of the principal who last saved the report (null: unrestricted): a run
   * looks only at members of these scopes (docs/alarms.md, "Permission scopes").
   */
  permissionScopeIds: string[] | null = null;
  nextRunAt: Date | null = null;
  scheduleAnchor: Date = new Date();
  lastRunAt: Date | null = null;
  lastResult: AlarmReportResult | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const AlarmReportSchema = new EntitySchema<AlarmReport>({
  class: AlarmReport,
  tableName: 'alarm_reports',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    // Restrict: a smart group used by a report is not deleted (409 DELETE_BLOCKED from the service).
    smartGroup: { kind: 'm:1', entity: () => SmartGroup, deleteRule: 'restrict', index: true },
    title: { type: 'string', length: 200 },
    schedule: { type: 'json', nullable: true },
    alarmHealthStates: { type: 'text[]' },
    mailConnector: {
      kind: 'm:1',
      entity: () => Connector,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    mailTo: { type: 'text[]' },
    permissionScopeIds: { type: 'text[]', columnType: 'uuid[]', nullable: true },
    nextRunAt: { type: 'datetime', columnType: 'timestamptz', nullable: true, index: true },
    scheduleAnchor: { type: 'datetime', columnType: 'timestamptz' },
    lastRunAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    lastResult: { type: 'json', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
