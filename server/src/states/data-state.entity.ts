import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { DigitalTwin } from '../twins/digital-twin.entity.js';
import type { StateSource } from './state-source.js';

export const STATE_VALUE_TYPES = ['number', 'integer', 'boolean', 'string', 'object'] as const;
export type StateValueType = (typeof STATE_VALUE_TYPES)[number];

export const VISUAL_TYPES = [
  'boolean',
  'line-chart',
  'gauge',
  'donut',
  'raw-values',
  'twin-button',
  'map-values',
] as const;
export type VisualType = (typeof VISUAL_TYPES)[number];

/** `meta` as the console writes it; `meta.visual.type` is one of VISUAL_TYPES. */
export interface StateMeta {
  visual?: {
    type?: VisualType;
    /** Line chart y-axis; 0 is a valid bound. */
    yAxis?: { min?: number | null; max?: number | null; unit?: string | null };
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** One value of a twin (temperature, flow in m³/h, pump running …) and where it comes from. */
export class DataState {
  id: string = newId();
  /** The twin's account, denormalised: tenancy checks and retention need no join. */
  account!: Account;
  twin!: DigitalTwin;
  /** Unique within the twin: 409 DUPLICATE_STATE_KEY `duplicate usage of state-key`. */
  key!: string;
  title = '';
  valueType: StateValueType = 'number';
  /** Unit of a numeric value, e.g. `m³/h`, `°C`. */
  unit: string | null = null;
  source: StateSource | null = null;
  meta: StateMeta = {};
  value: unknown = null;
  /** When `value` last changed (a write of the same value leaves it). */
  timestamp: Date | null = null;
  /** Set when the value does not fit `valueType` (the value is kept; spec: a warning shows). */
  warning: string | null = null;
  /** The state engine's running figures for this state (period accumulators, previous value). */
  engine: Record<string, unknown> = {};
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const DataStateSchema = new EntitySchema<DataState>({
  class: DataState,
  tableName: 'data_states',
  uniques: [{ properties: ['twin', 'key'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    twin: { kind: 'm:1', entity: () => DigitalTwin, deleteRule: 'cascade' },
    key: { type: 'string', length: 200 },
    title: { type: 'string', length: 200 },
    valueType: { type: 'string', length: 20 },
    unit: { type: 'string', length: 40, nullable: true },
    source: { type: 'json', nullable: true },
    meta: { type: 'json' },
    value: { type: 'json', nullable: true },
    timestamp: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    warning: { type: 'string', length: 300, nullable: true },
    engine: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
