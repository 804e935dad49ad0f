import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { AlarmLogService } from '../alarms/alarm-log.service.js';
import type { OutgoingDispatch } from '../integration/ports.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { aggregateOf, differenceOf, pushRecent } from '../states/engine/aggregate.js';
import type { StateEngine } from '../states/engine/state-engine.js';
import type { SourceComputations } from '../states/sources/state-source-kind.js';
import { RULE_COMMANDS } from './commands/index.js';
import type { CommandRun } from './commands/command.js';
import { alarmLink } from '../alarms/alarm-link.js';
import { renderText, renderValue, type PlaceholderContext } from './placeholders.js';
import type { RuleCommand, RuleRunResult } from './rule.types.js';

/** A rule as the runner needs it (from the ORM or the engine's in-memory copy). */
export interface RunnableRule {
  id: string;
  title: string;
  accountId: string;
  commands: RuleCommand[];
  /** The scopes the rule runs within (null: unrestricted). */
  permissionScopeIds: RecordedScopes;
}

export interface RuleRunnerDeps {
  orm: MikroORM;
  engine: StateEngine;
  outgoing: OutgoingDispatch;
  alarms: AlarmLogService;
  downlinks: CommandRun['downlinks'];
  publicUrl: string;
  log: FastifyBaseLogger;
}

/** Rule chains (a set-state firing another rule …) stop at this depth: a loop cannot run away. */
export const MAX_RULE_DEPTH = 4;

/**
 * Runs a rule's commands in order, each one's failure recorded and logged without stopping the
 * next; the outcome is stored as the rule's `lastRun`. States a set-state command writes are
 * remembered with the chain depth, so the event rules they fire know how deep the chain is.
 *
 * Permission scopes: a rule runs only over twins its recorded scopes allow. `fire` does not run
 * for a twin outside them, placeholders leave out ancestors outside them, and commands find only
 * states of twins within them — whichever path (event, location, time) fired the rule.
 */
export class RuleRunner {
  /** stateId → depth of the rule chain that wrote it, consumed when its change arrives. */
  readonly ruleWrites = new Map<string, number>();

  constructor(private readonly deps: RuleRunnerDeps) {}

  private sql<T>(query: string, params: unknown[]): Promise<T[]> {
    return this.deps.orm.em.fork().getConnection().execute<T[]>(query, params);
  }

  /**
   * The twin's title, hierarchy, custom properties and state values for placeholders; null when
   * the twin is missing or outside `scopes`. The hierarchy leaves out ancestors outside `scopes`.
   * `states`: the values as of the change that fired the rule (the stored ones may be newer already).
   */
  async twinContext(
    twinId: string,
    scopes: RecordedScopes,
    states?: Record<string, unknown>,
  ): Promise<PlaceholderContext['twin']> {
    const visible = visibleTwinSql({ permissionScopeIds: scopes }, 'dt');
    const [twin] = await this.sql<{
      id: string;
      title: string;
      path: string[];
      custom_properties: Record<string, unknown>;
    }>(`SELECT id, title, path, custom_properties FROM digital_twins dt WHERE id = ? AND (${visible.sql})`, [
      twinId,
      ...visible.params,
    ]);
    if (!twin) return null;
    const path = twin.path.length ? twin.path : [twin.id];
    const titles = await this.sql<{ id: string; title: string }>(
      `SELECT id, title FROM digital_twins dt WHERE id IN (?) AND (${visible.sql})`,
      [path, ...visible.params],
    );
    const byId = new Map(titles.map((t) => [t.id, t.title]));
    return {
      id: twin.id,
      title: twin.title,
      hierarchy: path.filter((id) => byId.has(id)).map((id) => byId.get(id)!),
      properties: twin.custom_properties ?? {},
      states: states ?? (await this.stateValues(twinId)),
    };
  }

  async stateValues(twinId: string): Promise<Record<string, unknown>> {
    const rows = await this.sql<{ key: string; value: unknown }>(
      'SELECT key, value FROM data_states WHERE twin_id = ?',
      [twinId],
    );
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  /** Whether the twin lies within the scopes (a missing twin does not). */
  async twinWithin(twinId: string, scopes: RecordedScopes): Promise<boolean> {
    if (scopes === null) return true;
    const rows = await this.sql<{ scope: string | null }>(
      'SELECT effective_permission_scope_id AS scope FROM digital_twins WHERE id = ?',
      [twinId],
    );
    return rows.length > 0 && scopeFilter({ permissionScopeIds: scopes }).allows(rows[0]!.scope);
  }

  /** Runs the commands; null (nothing run, nothing recorded) for a twin outside the rule's scopes. */
  async fire(
    rule: RunnableRule,
    trigger: string,
    twinId: string | null,
    time: Date,
    depth = 0,
    states?: Record<string, unknown>,
  ): Promise<RuleRunResult | null> {
    if (twinId && !(await this.twinWithin(twinId, rule.permissionScopeIds))) {
      this.deps.log.debug({ ruleId: rule.id, twinId }, 'rule not run: twin outside its permission scopes');
      return null;
    }
    const context: PlaceholderContext = {
      twin: twinId ? await this.twinContext(twinId, rule.permissionScopeIds, states) : null,
      rule: { id: rule.id, title: rule.title },
      trigger,
      time,
      publicUrl: this.deps.publicUrl,
    };
    const run = this.commandRun(rule, context, depth);
    const result: RuleRunResult = { at: time.toISOString(), trigger, twinId, commands: [] };
    for (const command of rule.commands) {
      const plugin = RULE_COMMANDS.get(command.type);
      try {
        if (!plugin) throw new Error(`unknown command type ${command.type}`);
        result.commands.push({ type: command.type, ok: true, result: await plugin.run(command, run) });
      } catch (error) {
        // Shown in the rule's last run: a database error is described without its statement.
        const message = safeErrorMessage(error);
        result.commands.push({ type: command.type, ok: false, error: message.slice(0, 500) });
        this.deps.log.warn({ ruleId: rule.id, command: command.type, err: error }, 'rule command failed');
      }
    }
    await this.sql('UPDATE rules SET last_fired_at = ?, last_run = ?::jsonb WHERE id = ?', [
      time,
      JSON.stringify(result),
      rule.id,
    ]);
    return result;
  }

  private commandRun(rule: RunnableRule, context: PlaceholderContext, depth: number): CommandRun {
    const visible = visibleTwinSql({ permissionScopeIds: rule.permissionScopeIds }, 'dt');
    const findState: CommandRun['findState'] = async (ref) => {
      const rows =
        typeof ref.stateId === 'string'
          ? await this.sql<{ id: string; source_type: string | null }>(
              `SELECT s.id, s.source->>'type' AS source_type
                 FROM data_states s JOIN digital_twins dt ON dt.id = s.twin_id
                WHERE s.id = ? AND s.account_id = ? AND (${visible.sql})`,
              [ref.stateId, rule.accountId, ...visible.params],
            )
          : typeof ref.stateKey === 'string' && context.twin
            ? await this.sql<{ id: string; source_type: string | null }>(
                `SELECT id, source->>'type' AS source_type FROM data_states WHERE twin_id = ? AND key = ?`,
                [context.twin.id, ref.stateKey],
              )
            : [];
      return rows[0] ? { id: rows[0].id, sourceType: rows[0].source_type } : null;
    };
    return {
      accountId: rule.accountId,
      ruleId: rule.id,
      twinId: context.twin?.id ?? null,
      now: context.time,
      render: (text) => renderText(text, context),
      renderValue: (value) => renderValue(value, context),
      outgoing: this.deps.outgoing,
      alarms: this.deps.alarms,
      raised: (entry) => {
        context.alarm = { id: entry.id, severity: entry.severity, occurrenceCount: entry.occurrenceCount };
      },
      alarm: () =>
        context.alarm ? { ...context.alarm, link: alarmLink(context.publicUrl, context.alarm.id) } : null,
      downlinks: this.deps.downlinks,
      permissionScopeIds: rule.permissionScopeIds,
      findState,
      setState: async (stateId, value) => {
        if (depth + 1 > MAX_RULE_DEPTH) throw new Error(`rule chain deeper than ${MAX_RULE_DEPTH}: not set`);
        this.ruleWrites.set(stateId, depth + 1);
        return this.unlessUnchanged(stateId, this.deps.engine.setValue(stateId, value, context.time));
      },
      recompute: async (stateId) => {
        if (depth + 1 > MAX_RULE_DEPTH)
          throw new Error(`rule chain deeper than ${MAX_RULE_DEPTH}: not recomputed`);
        // A change it makes fires event rules one step deeper in the chain, as a set-state does.
        this.ruleWrites.set(stateId, depth + 1);
        return this.unlessUnchanged(stateId, this.recompute(stateId, context.time));
      },
    };
  }

  /** No change, no change notice: the chain depth remembered for the state must not linger. */
  private async unlessUnchanged(
    stateId: string,
    write: Promise<{ changed: boolean }>,
  ): Promise<{ changed: boolean }> {
    try {
      const result = await write;
      if (!result.changed) this.ruleWrites.delete(stateId);
      return result;
    } catch (error) {
      this.ruleWrites.delete(stateId);
      throw error;
    }
  }

  /**
   * Aggregate trigger, by the computation the state's source descriptor names: one over states
   * takes their current values (a difference the two values it received last), one over a calendar
   * period rolls over when the period has ended.
   */
  async recompute(stateId: string, time: Date): Promise<{ changed: boolean }> {
    const def = (await this.deps.engine.routing()).byId.get(stateId);
    if (def?.compute === 'period') {
      const changes = await this.deps.engine.applyEvents([{ stateId, kind: 'tick', time }]);
      return { changed: changes.some((c) => c.stateId === stateId) };
    }
    if (def?.compute === 'states') {
      const source = def.source;
      const rows = await this.sql<{ id: string; value: unknown; recent: unknown }>(
        `SELECT id, value, engine->'recent' AS recent FROM data_states WHERE id IN (?)`,
        [[stateId, ...source.stateIds]],
      );
      const values = new Map(rows.map((r) => [r.id, r.value]));
      const recent = rows.find((r) => r.id === stateId)?.recent;
      return this.deps.engine.setValue(stateId, aggregateValue(source, values, recent), time);
    }
    throw new Error('the state has no aggregate source that can be recomputed');
  }
}

/**
 * An aggregate state's value from its sources' current values (`values` by state id); a
 * difference from the two values it received last (`recent`, kept in `data_states.engine`).
 */
export function aggregateValue(
  source: SourceComputations['states'],
  values: ReadonlyMap<string, unknown>,
  recent: unknown,
): number | null {
  if (source.operation === 'difference') return differenceOf(pushRecent(recent, null));
  return aggregateOf(
    source.operation,
    source.stateIds.map((id) => values.get(id) ?? null),
  );
}
