import { isText, type RuleCommandPlugin } from './command.js';

/**
 * `{type:'alarm', message, category?, details?}`: writes an alarm log entry about the rule's twin
 * (reference `digitalTwin`), which can start integration flows.
 */
export const alarmCommand: RuleCommandPlugin = {
  type: 'alarm',
  async validate(c) {
    if (!isText(c.message, 2000) || c.message.length === 0) return 'message is required';
    if (c.category !== undefined && !(isText(c.category, 100) && c.category.length > 0))
      return 'category must be a text';
    return undefined;
  },
  async run(c, ctx) {
    const entry = await ctx.alarms.write({
      accountId: ctx.accountId,
      category: typeof c.category === 'string' ? ctx.render(c.category) : 'Rule',
      message: ctx.render(String(c.message)),
      reference: ctx.twinId ? { type: 'digitalTwin', id: ctx.twinId } : null,
      source: { kind: 'rule', id: ctx.ruleId },
      details:
        c.details && typeof c.details === 'object'
          ? (ctx.renderValue(c.details) as Record<string, unknown>)
          : {},
    });
    return { alarmId: entry.id };
  },
};
