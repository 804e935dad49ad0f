import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

export type ValueType = 'number' | 'boolean' | 'string' | 'object';

export interface TargetVariable {
  key: string;
  type: ValueType;
  unit?: string;
  description?: string;
}

/** `type` names a parser plugin (`json`, `cbor`, `binary`, `javascript`); the rest is its settings. */
export interface ParserConfig {
  type: string;
  [setting: string]: unknown;
}

export interface HealthRule {
  /** A target variable, `_parsed` or `_raw`. */
  state: string;
  operator: string;
  value?: unknown;
  /** Health state the device gets when the rule matches. */
  result: string;
}

export interface HealthConfig {
  rules: HealthRule[];
  /** No packet for this long: the device is reported as silent. */
  silentAfterSeconds?: number;
  /** A change of the device's health writes an alarm log entry (category `Gerätezustand`). */
  alarmOnChange?: boolean;
}

/** How a device's packets become states: a parser, target variables and health rules. */
export class DeviceDriver {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  /** Offered to sub-accounts as well; an account whose shared drivers are used elsewhere cannot be deleted. */
  shared = false;
  parser: ParserConfig = { type: 'json' };
  targetVariables: TargetVariable[] = [];
  healthConfig: HealthConfig = { rules: [] };
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const DeviceDriverSchema = new EntitySchema<DeviceDriver>({
  class: DeviceDriver,
  tableName: 'device_drivers',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    shared: { type: 'boolean', default: false },
    parser: { type: 'json' },
    targetVariables: { type: 'json' },
    healthConfig: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
