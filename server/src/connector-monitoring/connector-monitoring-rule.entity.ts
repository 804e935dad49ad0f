import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { Connector } from '../connectors/connector.entity.js';
import type { MonitorParams, MonitorState, MonitorType } from './monitoring-conditions.js';

/**
 * Watches one connector; when its condition starts to hold, writes an alarm log entry
 * (category Konnektorüberwachung, the connector as reference) and optionally e-mails through an
 * SMTP connector of the same account. `state` is the evaluator's running figures.
 */
export class ConnectorMonitoringRule {
  id: string = newId();
  account!: Account;
  connector!: Connector;
  title!: string;
  type!: MonitorType;
  params!: MonitorParams;
  active = true;
  /** An `smtp-mail` connector of the same account; a connector used here cannot be deleted. */
  mailConnector: Connector | null = null;
  /** Recipients; empty: the mail connector's default recipients. */
  mailTo: string[] = [];
  state: MonitorState = { samples: [], transitions: [], firing: false };
  lastFiredAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const ConnectorMonitoringRuleSchema = new EntitySchema<ConnectorMonitoringRule>({
  class: ConnectorMonitoringRule,
  tableName: 'connector_monitoring_rules',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    connector: { kind: 'm:1', entity: () => Connector, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    type: { type: 'string', length: 40 },
    params: { type: 'json' },
    active: { type: 'boolean', default: true },
    mailConnector: {
      kind: 'm:1',
      entity: () => Connector,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    mailTo: { type: 'text[]' },
    state: { type: 'json' },
    lastFiredAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
