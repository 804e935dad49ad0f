import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/** What a filter expects; `Generic` (the default) takes any JSON value. */
export const FILTER_INPUT_TYPES = ['Generic', 'Packet', 'AlarmEntry'] as const;
export type FilterInputType = (typeof FILTER_INPUT_TYPES)[number];

/**
 * Where a flow's items come from: packets of the account's devices (all of them when both lists
 * are empty, else those of the named connectors or devices), or alarm log entries (of the named
 * categories, all when empty).
 */
export type FlowSource =
  | { type: 'packets'; connectorIds?: string[]; deviceIds?: string[] }
  | { type: 'alarms'; categories?: string[] };

/** One step of a flow, in order: a filter may stop the item, a transformer replaces it. */
export interface FlowStep {
  type: 'filter' | 'transformer';
  id: string;
}

/** An outgoing connector the flow's result goes to; `topic`/`subject` for MQTT, Kafka and mail. */
export interface FlowTarget {
  connectorId: string;
  topic?: string;
  subject?: string;
}

export class IntegrationFlow {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  active = true;
  source: FlowSource = { type: 'packets' };
  steps: FlowStep[] = [];
  targets: FlowTarget[] = [];
  /**
   * The permission scopes of the principal who last saved the flow (null: unrestricted): it takes
   * only packets of devices and alarm entries of these scopes (docs/integration-flows.md).
   */
  permissionScopeIds: string[] | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const IntegrationFlowSchema = new EntitySchema<IntegrationFlow>({
  class: IntegrationFlow,
  tableName: 'integration_flows',
  indexes: [{ properties: ['account', 'title'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    active: { type: 'boolean', default: true },
    source: { type: 'json' },
    steps: { type: 'json' },
    targets: { type: 'json' },
    permissionScopeIds: { type: 'text[]', columnType: 'uuid[]', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/** A sandboxed `function filter(input, meta)` returning true (pass) or false (stop). */
export class FlowFilter {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  inputType: FilterInputType = 'Generic';
  code!: string;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const FlowFilterSchema = new EntitySchema<FlowFilter>({
  class: FlowFilter,
  tableName: 'flow_filters',
  indexes: [{ properties: ['account', 'title'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    inputType: { type: 'string', length: 20, default: 'Generic' },
    code: { type: 'text' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/** A sandboxed `function transform(input, meta)` returning the value passed on. */
export class FlowTransformer {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  code!: string;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const FlowTransformerSchema = new EntitySchema<FlowTransformer>({
  class: FlowTransformer,
  tableName: 'flow_transformers',
  indexes: [{ properties: ['account', 'title'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    code: { type: 'text' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

export type FlowRunOutcome = 'sent' | 'filtered' | 'failed';

/** One run of a flow, for debugging; the newest RUNS_KEPT per flow are kept. */
export class IntegrationFlowRun {
  id: string = newId();
  flow!: IntegrationFlow;
  trigger!: 'packet' | 'alarm';
  outcome!: FlowRunOutcome;
  input: unknown = null;
  output: unknown = null;
  /** `{ code, message, level, step? }` when a step failed or stopped the item for a reason. */
  error: Record<string, unknown> | null = null;
  /** What each target's dispatcher answered. */
  deliveries: Array<Record<string, unknown>> = [];
  durationMs = 0;
  startedAt: Date = new Date();
}

export const IntegrationFlowRunSchema = new EntitySchema<IntegrationFlowRun>({
  class: IntegrationFlowRun,
  tableName: 'integration_flow_runs',
  indexes: [{ properties: ['flow', 'startedAt'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    flow: { kind: 'm:1', entity: () => IntegrationFlow, deleteRule: 'cascade' },
    trigger: { type: 'string', length: 20 },
    outcome: { type: 'string', length: 20 },
    input: { type: 'json', nullable: true },
    output: { type: 'json', nullable: true },
    error: { type: 'json', nullable: true },
    deliveries: { type: 'json' },
    durationMs: { type: 'integer' },
    startedAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
