import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { Connector } from '../connectors/connector.entity.js';
import {
  recordScopes,
  recordedWithin,
  sameScopes,
  seesRecorded,
} from '../permission-scopes/recorded-scopes.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { problem, type CheckProblem } from '../platform/http/problem-detail.js';
import { nextRun, scheduleDetail } from '../platform/schedule.js';
import { DataState } from '../states/data-state.entity.js';
import type { DigitalTwinService } from '../twins/digital-twin.service.js';
import { RULE_COMMANDS } from './commands/index.js';
import type { CommandValidation, DownlinkPort } from './commands/command.js';
import { conditionDetail } from './conditions.js';
import { areaProblem } from './geofence.js';
import { Rule } from './rule.entity.js';
import { ruleViews, type RuleView } from './rule-views.js';
import type { RuleCommand, RuleTrigger } from './rule.types.js';

export const RULE_SORTABLE = ['title', 'createdAt', 'updatedAt', 'lastFiredAt', 'nextRunAt'] as const;

export interface RuleInput {
  title?: string;
  description?: string;
  active?: boolean;
  twinId?: string | null;
  trigger?: RuleTrigger;
  commands?: RuleCommand[];
}

/** VALIDATION_ERROR with `message` and one detail: a keyword where one fits, else only the path. */
const invalid = (message: string, detail: CheckProblem | { path: string }) =>
  errors.validation(message, [detail]);

/**
 * Rules. Callers have checked rule.read/manage; the account must be reachable, and a restricted
 * caller sees a rule only when it is restricted to scopes all of which the caller has and its
 * twin (if any) is visible (docs/rules.md, "Permission scopes"). Saving records the saver's scopes
 * on the rule. Every command's settings are checked by its plugin against the rule's own account
 * (connectors of the right kind, states of twins the saver sees). A time rule's next run is
 * computed when it is saved, from the time of saving: a created or edited rule keeps exactly the
 * schedule it was given.
 */
export class RuleService {
  /** Told after every change so the rule engine reloads (rules/rule-engine.ts). */
  readonly changeListeners: Array<() => void> = [];

  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly twins: DigitalTwinService,
    private readonly clock: () => Date,
    private readonly downlinks: Pick<DownlinkPort, 'needsFPortInAccount'>,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    filter: { accountId?: string; twinId?: string; triggerType?: string },
  ): Promise<ListResult<RuleView>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const where: FilterQuery<Rule> = { $and: [{ account }, ...this.visibleWhere(principal)] };
    if (filter.twinId) where.twin = filter.twinId;
    if (filter.triggerType) where.trigger = { type: filter.triggerType } as never;
    if (params.search) where.title = { $ilike: likePattern(params.search) };
    const [rows, total] = await this.em().findAndCount(Rule, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(await ruleViews(this.em(), principal, rows), total, params);
  }

  /** One rule as the caller may see it (404 when hidden, exactly like a missing one). */
  async show(principal: Principal, id: string): Promise<RuleView> {
    const [view] = await ruleViews(this.em(), principal, [await this.get(principal, id)]);
    return view!;
  }

  /** The rule list's condition, so a listed rule is always one `get` finds. */
  private visibleWhere(principal: Principal): FilterQuery<Rule>[] {
    const scopes = scopeFilter(principal);
    if (!scopes.restricted) return [];
    return [
      recordedWithin<Rule>(principal, 'permissionScopeIds'),
      { $or: [{ twin: null }, { twin: { effectivePermissionScope: { $in: [...scopes.scopeIds] } } }] },
    ];
  }

  private async get(principal: Principal, id: string): Promise<Rule> {
    const rule = await this.em().findOne(Rule, { id }, { populate: ['account', 'twin'] });
    const notFound = () => errors.notFound('Rule', id);
    if (!rule || !canReach(principal, rule.account)) throw notFound();
    if (!seesRecorded(principal, rule.permissionScopeIds)) throw notFound();
    if (rule.twin) scopeFilter(principal).assertVisible(rule.twin.effectivePermissionScope?.id, notFound);
    return rule;
  }

  async create(principal: Principal, input: RuleInput & { accountId?: string }): Promise<RuleView> {
    const twin = input.twinId ? await this.twins.get(principal, input.twinId) : null;
    const account =
      twin && !input.accountId ? twin.account : await this.accounts.actingAccount(principal, input.accountId);
    const rule = new Rule();
    rule.account = account;
    await this.apply(principal, rule, input);
    await this.em().persistAndFlush(rule);
    this.changed();
    return (await ruleViews(this.em(), principal, [rule]))[0]!;
  }

  async update(principal: Principal, id: string, input: RuleInput): Promise<RuleView> {
    const rule = await this.get(principal, id);
    await this.apply(principal, rule, input);
    await this.em().flush();
    this.changed();
    return (await ruleViews(this.em(), principal, [rule]))[0]!;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.em().removeAndFlush(await this.get(principal, id));
    this.changed();
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  private async apply(principal: Principal, rule: Rule, input: RuleInput): Promise<void> {
    // The rule acts with the view of whoever saved it last; a last run made under another
    // restriction could name twins or states outside the new one.
    const scopes = recordScopes(principal);
    if (!sameScopes(rule.permissionScopeIds, scopes)) rule.lastRun = null;
    rule.permissionScopeIds = scopes;
    if (input.title !== undefined) rule.title = input.title.trim();
    if (!rule.title) throw invalid('title is required', problem('/title', 'required'));
    if (input.description !== undefined) rule.description = input.description;
    if (input.active !== undefined) rule.active = input.active;
    if (input.twinId !== undefined) {
      if (input.twinId === null) rule.twin = null;
      else {
        const twin = await this.twins.get(principal, input.twinId);
        if (twin.account.id !== rule.account.id) {
          throw errors.unprocessable(
            'CONFIG_NOT_ASSIGNED',
            'The twin belongs to another account than the rule',
            [problem('/twinId', 'notFound', { id: input.twinId })],
          );
        }
        rule.twin = twin;
      }
    }
    const triggerChanged = input.trigger !== undefined;
    if (input.trigger !== undefined) rule.trigger = input.trigger;
    if (!rule.trigger) throw invalid('trigger is required', problem('/trigger', 'required'));
    if (input.commands !== undefined) rule.commands = input.commands;
    await this.checkTrigger(rule);
    await this.checkCommands(principal, rule);
    if (rule.trigger.type === 'time') {
      if (triggerChanged || input.active !== undefined) {
        const now = this.clock();
        rule.scheduleAnchor = now;
        rule.nextRunAt = nextRun(rule.trigger.schedule, rule.account.timeZone, now, now);
      }
    } else rule.nextRunAt = null;
  }

  private async checkTrigger(rule: Rule): Promise<void> {
    const t = rule.trigger;
    if (t.type === 'time') {
      const found = scheduleDetail('/trigger/schedule', t.schedule ?? {}, rule.account.timeZone);
      if (found) throw invalid(found.message, found);
      return;
    }
    if (t.type === 'location') {
      const problemOfArea = areaProblem(t.area);
      if (problemOfArea) throw invalid(problemOfArea, { path: '/trigger/area' });
      if (!!t.latitudeKey !== !!t.longitudeKey) {
        const [property, missingProperty] = t.latitudeKey
          ? ['latitudeKey', 'longitudeKey']
          : ['longitudeKey', 'latitudeKey'];
        throw invalid(
          'give both latitudeKey and longitudeKey, or neither',
          problem('/trigger', 'dependentRequired', { property, missingProperty }),
        );
      }
      return;
    }
    if (t.conditions.length === 0)
      throw invalid(
        'an event rule needs at least one condition',
        problem('/trigger/conditions', 'minItems', { limit: 1 }),
      );
    const types = rule.twin ? await this.stateTypes(rule.twin.id) : new Map<string, string>();
    t.conditions.forEach((c, i) => {
      const found = conditionDetail(`/trigger/conditions/${i}`, c, types.get(c.stateKey));
      if (found) throw invalid(found.message, found);
    });
  }

  private async stateTypes(twinId: string): Promise<Map<string, string>> {
    const states = await this.em().find(DataState, { twin: twinId }, { fields: ['key', 'valueType'] });
    return new Map(states.map((s) => [s.key, s.valueType]));
  }

  private async checkCommands(principal: Principal, rule: Rule): Promise<void> {
    const v = this.validation(principal, rule.account, rule.twin?.id ?? null);
    for (const [i, command] of rule.commands.entries()) {
      const plugin = RULE_COMMANDS.get(command.type);
      if (!plugin) {
        throw invalid(
          `unknown command type "${command.type}"; use one of ${[...RULE_COMMANDS.keys()].join(', ')}`,
          problem(`/commands/${i}/type`, 'enum', { allowedValues: [...RULE_COMMANDS.keys()] }),
        );
      }
      const commandProblem = await plugin.validate(command, v);
      if (typeof commandProblem === 'object') {
        const { missingProperty, message } = commandProblem;
        throw errors.unprocessable(
          'INVALID_COMMAND',
          `commands[${i}] (${command.type}): ${missingProperty} ${message}`,
          [problem(`/commands/${i}/${missingProperty}`, 'required', { missingProperty }, message)],
        );
      }
      if (commandProblem)
        throw errors.unprocessable('INVALID_COMMAND', `commands[${i}] (${command.type}): ${commandProblem}`, [
          { path: `/commands/${i}` },
        ]);
    }
  }

  /** States a command names must be of twins the saver sees: hidden ones look missing. */
  private validation(principal: Principal, account: Account, twinId: string | null): CommandValidation {
    const em = this.em();
    const scopes = scopeFilter(principal);
    const visible: FilterQuery<DataState> = scopes.restricted
      ? { twin: { effectivePermissionScope: { $in: [...scopes.scopeIds] } } }
      : {};
    return {
      accountId: account.id,
      twinId,
      downlinkNeedsFPort: (deviceId) => this.downlinks.needsFPortInAccount(account.id, deviceId),
      connectorType: async (id) =>
        (await em.findOne(Connector, { id, account }, { fields: ['type'] }))?.type ?? null,
      findState: async (ref) => {
        const state =
          typeof ref.stateId === 'string'
            ? await em.findOne(DataState, { $and: [{ id: ref.stateId, account }, visible] })
            : typeof ref.stateKey === 'string' && twinId
              ? await em.findOne(DataState, { twin: twinId, key: ref.stateKey })
              : null;
        return state ? { id: state.id, sourceType: state.source?.type ?? null } : null;
      },
    };
  }
}
