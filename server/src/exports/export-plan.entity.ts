import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { Connector } from '../connectors/connector.entity.js';
import {
  DEFAULT_FORMAT,
  DEFAULT_SHAPE,
  type ExportFormat,
  type ExportRange,
  type ExportSelection,
  type ExportShape,
} from './export-plan.types.js';

/**
 * A saved export (docs/exports.md): what, when, shape, format and delivery. Runs are jobs of type
 * `export` in the jobs table; the plan keeps the last one's id for its list.
 */
export class ExportPlan {
  id: string = newId();
  account!: Account;
  title!: string;
  selection: ExportSelection = { operator: 'and', conditions: [], states: [] };
  range: ExportRange = { relative: 'previousDay' };
  timeZone = 'UTC';
  shape: ExportShape = { ...DEFAULT_SHAPE };
  format: ExportFormat = { ...DEFAULT_FORMAT };
  /** An `smtp-mail` connector of the same account; null: download only. */
  mailConnector: Connector | null = null;
  mailTo: string[] = [];
  /** A cron expression in `timeZone`; null: on demand only. */
  schedule: string | null = null;
  nextRunAt: Date | null = null;
  lastRunAt: Date | null = null;
  lastJobId: string | null = null;
  /** The permission scopes of whoever last saved the plan (null: unrestricted): runs export only their twins. */
  permissionScopeIds: string[] | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const ExportPlanSchema = new EntitySchema<ExportPlan>({
  class: ExportPlan,
  tableName: 'export_plans',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    selection: { type: 'json' },
    range: { type: 'json' },
    timeZone: { type: 'string', length: 64 },
    shape: { type: 'json' },
    format: { type: 'json' },
    // Restrict: a connector a plan mails through is not deleted (409 DELETE_BLOCKED from the guard).
    mailConnector: {
      kind: 'm:1',
      entity: () => Connector,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    mailTo: { type: 'text[]' },
    schedule: { type: 'string', length: 120, nullable: true },
    nextRunAt: { type: 'datetime', columnType: 'timestamptz', nullable: true, index: true },
    lastRunAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    lastJobId: { type: 'uuid', nullable: true },
    permissionScopeIds: { type: 'text[]', columnType: 'uuid[]', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
