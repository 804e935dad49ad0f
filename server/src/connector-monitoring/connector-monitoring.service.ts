import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { MAIL_KIND_TYPES } from '../connectors/kinds/index.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { ConnectorMonitoringRule } from './connector-monitoring-rule.entity.js';
import { paramsDetail, type MonitorParams, type MonitorType } from './monitoring-conditions.js';

export const MONITORING_RULE_SORTABLE = ['title', 'type', 'createdAt', 'updatedAt', 'lastFiredAt'] as const;

export interface MonitoringRuleInput {
  title?: string;
  type?: MonitorType;
  connectorId?: string;
  params?: MonitorParams;
  active?: boolean;
  mailConnectorId?: string | null;
  mailTo?: string[];
}

/**
 * Connector-monitoring rules. Callers have checked connectorMonitoring.read/manage; the account
 * must be reachable. The watched connector and the mail connector must belong to the rule's own
 * account; the mail connector must be of kind smtp-mail (422 otherwise). A changed rule starts
 * its running figures afresh.
 */
export class ConnectorMonitoringService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    filter: { accountId?: string; connectorId?: string },
  ): Promise<ListResult<ConnectorMonitoringRule>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const where: FilterQuery<ConnectorMonitoringRule> = { account };
    if (filter.connectorId) where.connector = filter.connectorId;
    if (params.search) where.title = { $ilike: likePattern(params.search) };
    const [rows, total] = await this.em().findAndCount(ConnectorMonitoringRule, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<ConnectorMonitoringRule> {
    const rule = await this.em().findOne(ConnectorMonitoringRule, { id }, { populate: ['account'] });
    if (!rule || !canReach(principal, rule.account)) throw errors.notFound('Connector monitoring rule', id);
    return rule;
  }

  async create(
    principal: Principal,
    input: MonitoringRuleInput & { accountId?: string },
  ): Promise<ConnectorMonitoringRule> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const rule = new ConnectorMonitoringRule();
    rule.account = account;
    await this.apply(rule, input);
    await this.em().persistAndFlush(rule);
    return rule;
  }

  async update(
    principal: Principal,
    id: string,
    input: MonitoringRuleInput,
  ): Promise<ConnectorMonitoringRule> {
    const rule = await this.get(principal, id);
    await this.apply(rule, input);
    rule.state = { samples: [], transitions: [], firing: false };
    await this.em().flush();
    return rule;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.em().removeAndFlush(await this.get(principal, id));
  }

  /** Connector deletion guard: rules that send their e-mail through this connector. */
  async mailConnectorBlockers(connectorId: string): Promise<unknown[]> {
    const rules = await this.em().find(
      ConnectorMonitoringRule,
      { mailConnector: connectorId },
      { fields: ['id', 'title'], limit: 20, orderBy: { title: 'asc' } },
    );
    return rules.map((r) => ({ type: 'connectorMonitoringRule', id: r.id, title: r.title }));
  }

  private async apply(rule: ConnectorMonitoringRule, input: MonitoringRuleInput): Promise<void> {
    if (input.title !== undefined) rule.title = input.title.trim();
    if (!rule.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.type !== undefined) rule.type = input.type;
    if (input.params !== undefined) rule.params = input.params;
    if (!rule.type || !rule.params)
      throw errors.validation('type and params are required', [
        problem(rule.type ? '/params' : '/type', 'required'),
      ]);
    const found = paramsDetail(rule.type, rule.params);
    if (found) throw errors.validation(found.message, [found]);
    if (input.active !== undefined) rule.active = input.active;
    if (input.mailTo !== undefined) rule.mailTo = [...new Set(input.mailTo)];
    if (input.connectorId !== undefined)
      rule.connector = await this.connectorOf(rule.account, input.connectorId, '/connectorId');
    if (!rule.connector)
      throw errors.validation('connectorId is required', [problem('/connectorId', 'required')]);
    if (input.mailConnectorId !== undefined) {
      if (input.mailConnectorId === null) rule.mailConnector = null;
      else {
        const mail = await this.connectorOf(rule.account, input.mailConnectorId, '/mailConnectorId');
        if (!MAIL_KIND_TYPES.includes(mail.type)) {
          throw errors.unprocessable(
            'INVALID_MAIL_CONNECTOR',
            `Connector ${mail.id} is a ${mail.type} connector; e-mail needs an ${MAIL_KIND_TYPES.join(' or ')} connector`,
            [{ path: '/mailConnectorId', type: mail.type }],
          );
        }
        rule.mailConnector = mail;
      }
    }
  }

  /** A connector of exactly the rule's account, else 422 (another account's id is not revealed). */
  private async connectorOf(account: Account, id: string, path: string): Promise<Connector> {
    const connector = await this.em().findOne(Connector, { id, account });
    if (!connector) {
      throw errors.unprocessable(
        'CONFIG_NOT_ASSIGNED',
        `Connector ${id} is not a connector of this account`,
        [problem(path, 'notFound', { id })],
      );
    }
    return connector;
  }
}
