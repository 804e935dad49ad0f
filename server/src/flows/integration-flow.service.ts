import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import { recordScopes, recordedWithin, seesRecorded } from '../permission-scopes/recorded-scopes.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import {
  FlowFilter,
  FlowTransformer,
  IntegrationFlow,
  IntegrationFlowRun,
  type FlowSource,
  type FlowStep,
  type FlowTarget,
} from './flow.entities.js';
import { RUNS_KEPT } from './flow.runner.js';

/** A named object missing from the flow's account: `notFound`, with its `id` also beside the keyword. */
const notFound = (path: string, id: string, message: string) => ({
  ...problem(path, 'notFound', { id }, message),
  id,
});

/** The source as the API takes it: one shape for both types, checked in `checkSource`. */
export interface SourceInput {
  type: 'packets' | 'alarms';
  connectorIds?: string[];
  deviceIds?: string[];
  categories?: string[];
}

export const INTEGRATION_FLOW_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface IntegrationFlowInput {
  title?: string;
  description?: string;
  active?: boolean;
  source?: SourceInput;
  steps?: FlowStep[];
  targets?: FlowTarget[];
}

/**
 * Integration flows of an account. Callers have checked integrationFlow.read/manage; here the
 * account must be reachable, and everything a flow names (source connectors and devices, filters,
 * transformers, target connectors) must belong to the flow's own account. Targets must be
 * outgoing connectors. `changed` tells the runner to reload the account's flows.
 *
 * Permission scopes: a flow records the scopes of whoever saved it last (creating, changing,
 * activating or deactivating it) and the runner gives it only items of those scopes; a restricted
 * reader sees a flow only when it has all of them (permission-scopes/recorded-scopes.ts), and a
 * restricted saver cannot name devices it does not see.
 */
export class IntegrationFlowService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly isOutgoingType: (type: string) => boolean,
    private readonly changed: (accountId: string) => void,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<IntegrationFlow>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where: FilterQuery<IntegrationFlow> = {
      $and: [
        { account },
        recordedWithin<IntegrationFlow>(principal, 'permissionScopeIds'),
        params.search ? { title: { $ilike: likePattern(params.search) } } : {},
      ],
    };
    const [rows, total] = await this.em().findAndCount(IntegrationFlow, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<IntegrationFlow> {
    const flow = await this.em().findOne(IntegrationFlow, { id }, { populate: ['account'] });
    if (!flow || !canReach(principal, flow.account) || !seesRecorded(principal, flow.permissionScopeIds))
      throw errors.notFound('Integration flow', id);
    return flow;
  }

  async create(
    principal: Principal,
    input: IntegrationFlowInput & { accountId?: string },
  ): Promise<IntegrationFlow> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const flow = new IntegrationFlow();
    flow.account = account;
    await this.apply(principal, flow, input);
    await this.em().persistAndFlush(flow);
    this.changed(account.id);
    return flow;
  }

  async update(principal: Principal, id: string, input: IntegrationFlowInput): Promise<IntegrationFlow> {
    const flow = await this.get(principal, id);
    await this.apply(principal, flow, input);
    await this.em().flush();
    this.changed(flow.account.id);
    return flow;
  }

  async setActive(principal: Principal, id: string, active: boolean): Promise<IntegrationFlow> {
    return this.update(principal, id, { active });
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const flow = await this.get(principal, id);
    await this.em().removeAndFlush(flow);
    this.changed(flow.account.id);
  }

  /** The newest runs first (at most RUNS_KEPT are kept). */
  async runs(principal: Principal, id: string): Promise<IntegrationFlowRun[]> {
    const flow = await this.get(principal, id);
    return this.em().find(
      IntegrationFlowRun,
      { flow: flow.id },
      { orderBy: [{ startedAt: 'desc' }, { id: 'desc' }], limit: RUNS_KEPT },
    );
  }

  private async apply(
    principal: Principal,
    flow: IntegrationFlow,
    input: IntegrationFlowInput,
  ): Promise<void> {
    flow.permissionScopeIds = recordScopes(principal);
    if (input.title !== undefined) flow.title = input.title.trim();
    if (!flow.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) flow.description = input.description;
    if (input.active !== undefined) flow.active = input.active;
    if (input.source !== undefined)
      flow.source = await this.checkSource(principal, flow.account, input.source);
    if (input.steps !== undefined) {
      await this.checkSteps(flow.account, input.steps);
      flow.steps = input.steps.map((s) => ({ type: s.type, id: s.id }));
    }
    if (input.targets !== undefined) {
      await this.checkTargets(flow.account, input.targets);
      flow.targets = input.targets;
    }
  }

  /** Ids among `ids` that are not rows of `entity` in the account (or not within `scope`). */
  private async missing(
    entity: typeof Connector | typeof VirtualDevice | typeof FlowFilter | typeof FlowTransformer,
    account: Account,
    ids: string[],
    scope: FilterQuery<Connector> = {},
  ) {
    if (ids.length === 0) return [];
    const found = await this.em().find(
      entity as typeof Connector,
      { $and: [{ id: { $in: ids }, account }, scope] },
      { fields: ['id'] },
    );
    const known = new Set(found.map((r) => r.id));
    return ids.filter((id) => !known.has(id));
  }

  private async checkSource(
    principal: Principal,
    account: Account,
    source: SourceInput,
  ): Promise<FlowSource> {
    if (source.type === 'alarms') {
      if (source.connectorIds?.length || source.deviceIds?.length) {
        throw errors.validation('An alarms source takes categories, not connectorIds or deviceIds', [
          { path: '/source' },
        ]);
      }
      return { type: 'alarms', categories: source.categories ?? [] };
    }
    if (source.categories?.length) {
      throw errors.validation('A packets source takes connectorIds and deviceIds, not categories', [
        { path: '/source/categories' },
      ]);
    }
    const unknownConnectors = await this.missing(Connector, account, source.connectorIds ?? []);
    // A device the saver does not see is refused exactly like a missing one.
    const unknownDevices = await this.missing(
      VirtualDevice,
      account,
      source.deviceIds ?? [],
      scopeFilter(principal).where<Connector>('permissionScope'),
    );
    const details = [
      ...unknownConnectors.map((id) =>
        notFound('/source/connectorIds', id, 'no such connector in the flow account'),
      ),
      ...unknownDevices.map((id) => notFound('/source/deviceIds', id, 'no such device in the flow account')),
    ];
    if (details.length > 0)
      throw errors.validation('The flow source names objects that are not in its account', details);
    return { type: 'packets', connectorIds: source.connectorIds ?? [], deviceIds: source.deviceIds ?? [] };
  }

  private async checkSteps(account: Account, steps: FlowStep[]): Promise<void> {
    const ofType = (type: FlowStep['type']) => steps.filter((s) => s.type === type).map((s) => s.id);
    const unknownFilters = await this.missing(FlowFilter, account, ofType('filter'));
    const unknownTransformers = await this.missing(FlowTransformer, account, ofType('transformer'));
    const details = [
      ...unknownFilters.map((id) => notFound('/steps', id, 'no such filter in the flow account')),
      ...unknownTransformers.map((id) => notFound('/steps', id, 'no such transformer in the flow account')),
    ];
    if (details.length > 0)
      throw errors.validation(
        'The flow steps name filters or transformers that are not in its account',
        details,
      );
  }

  private async checkTargets(account: Account, targets: FlowTarget[]): Promise<void> {
    const ids = targets.map((t) => t.connectorId);
    const found = ids.length
      ? await this.em().find(Connector, { id: { $in: ids }, account }, { fields: ['id', 'type'] })
      : [];
    const types = new Map(found.map((c) => [c.id, c.type]));
    const details = ids.flatMap((id, i) => {
      const type = types.get(id);
      if (type === undefined)
        return [notFound(`/targets/${i}/connectorId`, id, 'no such connector in the flow account')];
      if (!this.isOutgoingType(type))
        return [
          { path: `/targets/${i}/connectorId`, id, message: `a ${type} connector does not send messages` },
        ];
      return [];
    });
    if (details.length > 0)
      throw errors.validation('The flow targets must be outgoing connectors of its account', details);
  }
}
