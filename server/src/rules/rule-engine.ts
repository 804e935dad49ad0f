import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { AlarmLogService } from '../alarms/alarm-log.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { newId } from '../platform/crypto/ids.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import type { StateChange } from '../states/engine/state-work.js';
import { alarmClearOf, type AlarmClear } from './commands/alarm.command.js';
import { conditionsHold } from './conditions.js';
import { contains, positionOf } from './geofence.js';
import { MAX_RULE_DEPTH, type RuleRunner } from './rule-runner.js';
import type { LocationTrigger, RuleCommand, RuleTrigger } from './rule.types.js';

/**
 * Event and location rules: evaluated on the twin state changes the state engine reports after
 * each commit (incoming data, API writes, timers, other rules' set-state commands).
 *
 * - Event rule: after a change of one of its conditions' states, the conditions are checked over
 *   the twin's current states; it fires when they start to hold (or on every such change while they
 *   hold, with `onChangeOnly: false`).
 * - Location rule: after a change of its position state(s), the position is tested against the
 *   area; `enter` fires on outside → inside, `leave` on inside → outside. A twin seen for the first
 *   time counts as coming from outside (so a first position inside is an enter, never a leave).
 * - Clear condition (an `alarm` command's `clear`, any trigger type): after a change of one of its
 *   states, while it holds over the twin's current states, the rule's alarm entry about the twin
 *   that is not closed yet is closed (reason `cleared`). It is checked before the trigger, so a
 *   rule whose trigger and clear both hold ends with a fresh entry, never a closed one.
 * The last result per rule and twin is stored (rule_twin_states): restarts neither repeat nor miss
 * an edge. A rule looks only at twins within its recorded permission scopes: a twin outside them
 * is neither evaluated nor remembered (and the runner refuses to fire for it as well).
 *
 * Failure behaviour: change batches are processed one after the other off the ingest path, at
 * most MAX_PENDING waiting; more are dropped, counted and logged (ingestion is never slowed). A
 * failing rule is logged and the others go on. Rule definitions are reloaded after a change on
 * this node and every 15 s (changes made on other nodes).
 */

const MAX_PENDING = 1000;
const RELOAD_MS = 15_000;

interface LoadedRule {
  id: string;
  title: string;
  accountId: string;
  twinId: string | null;
  trigger: RuleTrigger;
  commands: RuleCommand[];
  permissionScopeIds: RecordedScopes;
  clear: AlarmClear | null;
}

export class RuleEngine implements Lifecycle {
  readonly name = 'rule-engine';
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private version = 0;
  private loaded: { version: number; at: number; rules: LoadedRule[] } | undefined;
  private readonly dropped;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      runner: RuleRunner;
      alarms: Pick<AlarmLogService, 'clear'>;
      clock: () => Date;
      log: FastifyBaseLogger;
      metrics?: Metrics;
    },
  ) {
    this.dropped = deps.metrics?.counter(
      'stellwerk_rule_changes_dropped_total',
      'State change batches rules skipped (queue full)',
    );
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.idle();
  }

  rulesChanged(): void {
    this.version++;
  }

  /** The state engine listener: queues the batch, never blocks or throws. */
  readonly onStateChanges = (changes: StateChange[]): void => {
    if (this.pending >= MAX_PENDING) {
      this.dropped?.inc();
      this.deps.log.warn({ changes: changes.length }, 'rules: change queue full, batch skipped');
      return;
    }
    this.pending++;
    this.chain = this.chain
      .then(() => this.process(changes))
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'rules: evaluating changes failed'))
      .finally(() => this.pending--);
  };

  /** Resolves when every queued batch has been processed (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending > 0) await this.chain;
  }

  private sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
    return this.deps.orm.em.fork().getConnection().execute<T[]>(query, params);
  }

  private async rules(): Promise<LoadedRule[]> {
    const now = Date.now();
    if (this.loaded && this.loaded.version === this.version && now - this.loaded.at < RELOAD_MS)
      return this.loaded.rules;
    const version = this.version;
    const rows = await this.sql<{
      id: string;
      title: string;
      account_id: string;
      twin_id: string | null;
      trigger: RuleTrigger;
      commands: RuleCommand[];
      permission_scope_ids: string[] | null;
    }>(
      `SELECT id, title, account_id, twin_id, trigger, commands, permission_scope_ids FROM rules
        WHERE active AND (trigger->>'type' IN ('event', 'location') OR commands @> '[{"type":"alarm"}]')`,
    );
    const rules = rows
      .map((r) => ({
        id: r.id,
        title: r.title,
        accountId: r.account_id,
        twinId: r.twin_id,
        trigger: r.trigger,
        commands: r.commands,
        permissionScopeIds: r.permission_scope_ids,
        clear: alarmClearOf(r.commands),
      }))
      .filter((r) => r.trigger.type !== 'time' || r.clear !== null);
    this.loaded = { version, at: now, rules };
    return rules;
  }

  private async process(changes: StateChange[]): Promise<void> {
    const twins = new Map<
      string,
      { accountId: string; changes: StateChange[]; keys: Set<string>; depth: number }
    >();
    for (const c of changes) {
      const depth = this.deps.runner.ruleWrites.get(c.stateId) ?? 0;
      this.deps.runner.ruleWrites.delete(c.stateId);
      const entry = twins.get(c.twinId) ?? {
        accountId: c.accountId,
        changes: [],
        keys: new Set<string>(),
        depth: 0,
      };
      entry.changes.push(c);
      entry.keys.add(c.key);
      entry.depth = Math.max(entry.depth, depth);
      twins.set(c.twinId, entry);
    }
    const rules = await this.rules();
    if (rules.length === 0) return;
    const scopes = rules.some((r) => r.permissionScopeIds !== null)
      ? await this.twinScopes([...twins.keys()])
      : new Map<string, string | null>();
    for (const [twinId, { accountId, changes: twinChanges, keys, depth }] of twins) {
      const relevant = rules.filter(
        (r) =>
          r.accountId === accountId &&
          (r.twinId === null || r.twinId === twinId) &&
          watchedKeys(r.trigger, r.clear).some((k) => keys.has(k)) &&
          (r.permissionScopeIds === null ||
            (scopes.has(twinId) && scopeFilter(r).allows(scopes.get(twinId)))),
      );
      if (relevant.length === 0) continue;
      if (depth >= MAX_RULE_DEPTH) {
        this.deps.log.warn({ twinId, depth }, 'rules: chain too deep, not evaluated');
        continue;
      }
      await this.evaluateTwin(twinId, relevant, twinChanges, depth);
    }
  }

  /** The effective permission scope of each twin (twins deleted meanwhile are absent). */
  private async twinScopes(twinIds: string[]): Promise<Map<string, string | null>> {
    const rows = await this.sql<{ id: string; scope: string | null }>(
      'SELECT id, effective_permission_scope_id AS scope FROM digital_twins WHERE id IN (?)',
      [twinIds],
    );
    return new Map(rows.map((r) => [r.id, r.scope]));
  }

  /**
   * Evaluates the rules step by step through the twin's changes, each step over the states as they
   * were after it: a value that dips and comes back within one batch (or before the batch before it
   * was evaluated) is one stop and one start of the conditions, as on a slower day, not nothing.
   */
  private async evaluateTwin(
    twinId: string,
    rules: LoadedRule[],
    changes: StateChange[],
    depth: number,
  ): Promise<void> {
    // Stored values are the latest: keys no step has reached yet are read at their newest value.
    const states = await this.deps.runner.stateValues(twinId);
    const stored = await this.sql<{ rule_id: string; matched: boolean | null; inside: boolean | null }>(
      'SELECT rule_id, matched, inside FROM rule_twin_states WHERE twin_id = ? AND rule_id IN (?)',
      [twinId, rules.map((r) => r.id)],
    );
    const last = new Map(stored.map((s) => [s.rule_id, { matched: s.matched, inside: s.inside }]));
    for (const step of changeSteps(changes)) {
      for (const change of step) states[change.key] = change.value;
      const keys = new Set(step.map((c) => c.key));
      for (const rule of rules) {
        if (!watchedKeys(rule.trigger, rule.clear).some((k) => keys.has(k))) continue;
        const prev = last.get(rule.id) ?? { matched: null, inside: null };
        last.set(rule.id, prev);
        try {
          await this.evaluateRule(rule, twinId, { ...states }, prev, depth);
        } catch (error) {
          this.deps.log.warn({ err: error, ruleId: rule.id, twinId }, 'rules: rule evaluation failed');
        }
      }
    }
  }

  /** One rule over one step's states; `prev` (the last stored result) is updated in place. */
  private async evaluateRule(
    rule: LoadedRule,
    twinId: string,
    states: Record<string, unknown>,
    prev: { matched: boolean | null; inside: boolean | null },
    depth: number,
  ): Promise<void> {
    const now = this.deps.clock();
    if (rule.clear && conditionsHold(rule.clear.conditions, states, rule.clear.match))
      await this.deps.alarms.clear(
        rule.accountId,
        { kind: 'rule', id: rule.id },
        { type: 'digitalTwin', id: twinId },
      );
    if (rule.trigger.type === 'time') return;
    if (rule.trigger.type === 'event') {
      const holds = conditionsHold(rule.trigger.conditions, states, rule.trigger.match);
      const wasHolding = prev.matched === true;
      if (prev.matched !== holds) {
        await this.remember(rule.id, twinId, { matched: holds });
        prev.matched = holds;
      }
      if (holds && (rule.trigger.onChangeOnly === false || !wasHolding))
        await this.deps.runner.fire(rule, 'event', twinId, now, depth, states);
      return;
    }
    const position = positionFrom(rule.trigger, states);
    if (!position) return;
    const inside = contains(rule.trigger.area, position);
    const wasInside = prev.inside === true;
    if (prev.inside !== inside) {
      await this.remember(rule.id, twinId, { inside });
      prev.inside = inside;
    }
    const edge = inside && !wasInside ? 'enter' : !inside && wasInside ? 'leave' : null;
    if (edge && (rule.trigger.on === 'both' || rule.trigger.on === edge))
      await this.deps.runner.fire(rule, edge, twinId, now, depth, states);
  }

  private async remember(
    ruleId: string,
    twinId: string,
    value: { matched?: boolean; inside?: boolean },
  ): Promise<void> {
    await this.sql(
      `INSERT INTO rule_twin_states (id, rule_id, twin_id, matched, inside, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (rule_id, twin_id) DO UPDATE
          SET matched = coalesce(excluded.matched, rule_twin_states.matched),
              inside = coalesce(excluded.inside, rule_twin_states.inside),
              updated_at = excluded.updated_at`,
      [newId(), ruleId, twinId, value.matched ?? null, value.inside ?? null, this.deps.clock()],
    );
  }
}

/**
 * A twin's changes in the order they were committed, cut into steps: a step ends where a key comes
 * again, so the keys of one update (and what was computed from them) are seen together, and a later
 * update of the same key is a step of its own.
 */
export function changeSteps(changes: StateChange[]): StateChange[][] {
  const steps: StateChange[][] = [];
  let step: StateChange[] = [];
  const keys = new Set<string>();
  for (const change of changes) {
    if (keys.has(change.key)) {
      steps.push(step);
      step = [];
      keys.clear();
    }
    step.push(change);
    keys.add(change.key);
  }
  if (step.length > 0) steps.push(step);
  return steps;
}

/** The state keys whose changes make a rule look again (its trigger's and its clear condition's). */
export function watchedKeys(trigger: RuleTrigger, clear: AlarmClear | null = null): string[] {
  const clearKeys = clear?.conditions.map((c) => c.stateKey) ?? [];
  return [...triggerKeys(trigger), ...clearKeys];
}

function triggerKeys(trigger: RuleTrigger): string[] {
  if (trigger.type === 'time') return [];
  if (trigger.type === 'event') return trigger.conditions.map((c) => c.stateKey);
  if (trigger.latitudeKey && trigger.longitudeKey) return [trigger.latitudeKey, trigger.longitudeKey];
  return [trigger.locationKey ?? 'location'];
}

function positionFrom(trigger: LocationTrigger, states: Record<string, unknown>) {
  if (trigger.latitudeKey && trigger.longitudeKey)
    return positionOf({ lat: states[trigger.latitudeKey], lon: states[trigger.longitudeKey] });
  return positionOf(states[trigger.locationKey ?? 'location']);
}
