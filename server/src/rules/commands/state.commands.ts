import { sourceTypesWhere, type StateSourceType } from '../../states/sources/index.js';
import type { RuleCommand } from '../rule.types.js';
import {
  isText,
  isUuid,
  type CommandRun,
  type CommandValidation,
  type RuleCommandPlugin,
} from './command.js';

/** Sources whose value the aggregate trigger can recompute now. */
const RECOMPUTABLE = sourceTypesWhere((d) => d.recomputable === true);

const ref = (c: RuleCommand) => ({ stateId: c.stateId, stateKey: c.stateKey });

async function stateProblem(c: RuleCommand, v: CommandValidation) {
  if (c.stateId === undefined && c.stateKey === undefined)
    return 'stateId (or stateKey of the rule’s twin) is required';
  if (c.stateId !== undefined && !isUuid(c.stateId)) return 'stateId must be a uuid';
  if (c.stateKey !== undefined && !(isText(c.stateKey, 200) && c.stateKey.length > 0))
    return 'stateKey must be a text';
  if (c.stateKey !== undefined && !v.twinId && c.stateId === undefined)
    return 'stateKey needs a rule with a twin';
  return (await v.findState(ref(c))) ? undefined : 'no such state in this account';
}

async function target(c: RuleCommand, ctx: CommandRun) {
  const state = await ctx.findState(ref(c));
  if (!state) throw new Error('the state no longer exists');
  return state;
}

/**
 * `{type:'set-state', stateId | stateKey, value}`: sets a state as the API does (dependants
 * recomputed, a point written). A text value is rendered first, so `{{states.x}}` copies a value.
 */
export const setStateCommand: RuleCommandPlugin = {
  type: 'set-state',
  async validate(c, v) {
    if (!('value' in c)) return 'value is required';
    return stateProblem(c, v);
  },
  async run(c, ctx) {
    const state = await target(c, ctx);
    const value = typeof c.value === 'string' ? ctx.render(c.value) : c.value;
    const { changed } = await ctx.setState(state.id, value);
    return { stateId: state.id, value, changed };
  },
};

/** `{type:'aggregate-trigger', stateId | stateKey}`: recomputes an aggregate or time-aggregated state now. */
export const aggregateTriggerCommand: RuleCommandPlugin = {
  type: 'aggregate-trigger',
  async validate(c, v) {
    const problem = await stateProblem(c, v);
    if (problem) return problem;
    const state = await v.findState(ref(c));
    return state && RECOMPUTABLE.includes(state.sourceType as StateSourceType)
      ? undefined
      : `the state must have an ${RECOMPUTABLE.join(' or ')} source`;
  },
  async run(c, ctx) {
    const state = await target(c, ctx);
    const { changed } = await ctx.recompute(state.id);
    return { stateId: state.id, changed };
  },
};
