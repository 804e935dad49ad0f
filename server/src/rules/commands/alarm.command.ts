import { isAlarmSeverity, ALARM_SEVERITIES } from '../../alarms/alarm-log.entity.js';
import { conditionProblem, type Condition } from '../conditions.js';
import type { RuleCommand } from '../rule.types.js';
import { isText, type RuleCommandPlugin } from './command.js';

/** When an alarm of the rule closes by itself: these conditions over the twin's states hold. */
export interface AlarmClear {
  conditions: Condition[];
  /** `all` (default) or `any` of the conditions. */
  match?: 'all' | 'any';
}

/** The clear condition of a rule's alarm command, if it has one (the first alarm command's). */
export function alarmClearOf(commands: readonly RuleCommand[]): AlarmClear | null {
  const clear = commands.find((c) => c.type === 'alarm' && c.clear)?.clear as Partial<AlarmClear> | undefined;
  return clear && Array.isArray(clear.conditions) && clear.conditions.length > 0
    ? (clear as AlarmClear)
    : null;
}

function clearProblem(clear: unknown): string | undefined {
  if (clear === undefined) return undefined;
  if (typeof clear !== 'object' || clear === null) return 'clear must be {conditions: [...], match?}';
  const c = clear as { conditions?: Condition[]; match?: unknown };
  if (!Array.isArray(c.conditions) || c.conditions.length === 0)
    return 'clear must be {conditions: [...], match?}';
  if (c.conditions.length > 20) return 'clear takes at most 20 conditions';
  if (c.match !== undefined && c.match !== 'all' && c.match !== 'any')
    return 'clear.match must be all or any';
  for (const [i, condition] of c.conditions.entries()) {
    if (typeof condition !== 'object' || condition === null || !isText(condition.stateKey, 100))
      return `clear.conditions[${i}].stateKey is required`;
    const problem = conditionProblem(condition);
    if (problem) return `clear.conditions[${i}]: ${problem}`;
  }
  return undefined;
}

/**
 * `{type:'alarm', message, category?, severity?, details?, clear?}`: writes an alarm log entry about
 * the rule's twin (reference `digitalTwin`), which can start integration flows. While that entry is
 * not closed, the rule firing again for the twin counts a repeat occurrence on it instead of a new
 * entry. `severity` defaults to `warning`. `clear: {conditions, match?}` closes the entry by itself
 * once those conditions hold over the twin's states (evaluated by the rule engine on every change
 * of their states; a threshold lower than the trigger's gives a hysteresis).
 */
export const alarmCommand: RuleCommandPlugin = {
  type: 'alarm',
  async validate(c) {
    if (!isText(c.message, 2000) || c.message.length === 0) return 'message is required';
    if (c.category !== undefined && !(isText(c.category, 100) && c.category.length > 0))
      return 'category must be a text';
    if (c.severity !== undefined && !isAlarmSeverity(c.severity))
      return `severity must be one of ${ALARM_SEVERITIES.join(', ')}`;
    return clearProblem(c.clear);
  },
  async run(c, ctx) {
    const entry = await ctx.alarms.write({
      accountId: ctx.accountId,
      category: typeof c.category === 'string' ? ctx.render(c.category) : 'Rule',
      message: ctx.render(String(c.message)),
      reference: ctx.twinId ? { type: 'digitalTwin', id: ctx.twinId } : null,
      source: { kind: 'rule', id: ctx.ruleId },
      ...(isAlarmSeverity(c.severity) ? { severity: c.severity } : {}),
      details:
        c.details && typeof c.details === 'object'
          ? (ctx.renderValue(c.details) as Record<string, unknown>)
          : {},
    });
    ctx.raised(entry);
    return { alarmId: entry.id, severity: entry.severity, occurrenceCount: entry.occurrenceCount };
  },
};
