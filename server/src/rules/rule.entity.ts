import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { DigitalTwin } from '../twins/digital-twin.entity.js';
import type { RuleCommand, RuleRunResult, RuleTrigger } from './rule.types.js';

/**
 * A rule of an account: a trigger (event, time, location), commands, and optionally the twin it
 * belongs to (event and location rules then watch only that twin; placeholders use it).
 */
export class Rule {
  id: string = newId();
  account!: Account;
  twin: DigitalTwin | null = null;
  title!: string;
  description = '';
  active = true;
  trigger!: RuleTrigger;
  commands: RuleCommand[] = [];
  /**
   * The permission scopes of the principal who last saved the rule (null: unrestricted). The rule
   * runs only over twins whose effective scope is one of them (docs/rules.md, "Permission scopes").
   */
  permissionScopeIds: string[] | null = null;
  /** Time rules: the next run; null when none is due any more (a past time point). */
  nextRunAt: Date | null = null;
  /** Time rules: where the interval grid starts (creation or the last edit of the trigger). */
  scheduleAnchor: Date = new Date();
  lastFiredAt: Date | null = null;
  lastRun: RuleRunResult | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const RuleSchema = new EntitySchema<Rule>({
  class: Rule,
  tableName: 'rules',
  indexes: [{ properties: ['nextRunAt'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    twin: { kind: 'm:1', entity: () => DigitalTwin, nullable: true, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    active: { type: 'boolean', default: true },
    trigger: { type: 'json' },
    commands: { type: 'json' },
    permissionScopeIds: { type: 'text[]', columnType: 'uuid[]', nullable: true },
    nextRunAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    scheduleAnchor: { type: 'datetime', columnType: 'timestamptz' },
    lastFiredAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    lastRun: { type: 'json', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/**
 * Edge detection per rule and twin, persisted so a restart neither repeats nor misses an edge:
 * `matched` (event rules: the conditions held at the last change), `inside` (location rules).
 */
export class RuleTwinState {
  id: string = newId();
  rule!: Rule;
  twin!: DigitalTwin;
  matched: boolean | null = null;
  inside: boolean | null = null;
  updatedAt: Date = new Date();
}

export const RuleTwinStateSchema = new EntitySchema<RuleTwinState>({
  class: RuleTwinState,
  tableName: 'rule_twin_states',
  uniques: [{ properties: ['rule', 'twin'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    rule: { kind: 'm:1', entity: () => Rule, deleteRule: 'cascade' },
    twin: { kind: 'm:1', entity: () => DigitalTwin, deleteRule: 'cascade', index: true },
    matched: { type: 'boolean', nullable: true },
    inside: { type: 'boolean', nullable: true },
    updatedAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
