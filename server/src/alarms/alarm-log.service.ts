import { raw, type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import type { AlarmEntry, AlarmEntryEvents, AlarmEntryListener, AlarmStatus } from '../integration/ports.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { AlarmLog } from './alarm-log.entity.js';
import { visibleAlarmSql } from './alarm-visibility.js';

export const ALARM_LOG_SORTABLE = ['createdAt', 'updatedAt', 'category', 'status'] as const;

export interface AlarmLogFilter {
  accountId?: string;
  status?: AlarmStatus[];
  category?: string;
  referenceType?: string;
  referenceId?: string;
}

/** What a producer (rule, monitoring rule, report, API caller) writes. */
export interface AlarmInput {
  accountId: string;
  category: string;
  message: string;
  reference?: { type: string; id: string } | null;
  source?: { kind: string; id: string } | null;
  details?: Record<string, unknown>;
}

export const alarmEntryOf = (a: AlarmLog): AlarmEntry => ({
  id: a.id,
  accountId: a.account.id,
  category: a.category,
  message: a.message,
  status: a.status,
  reference: a.referenceType && a.referenceId ? { type: a.referenceType, id: a.referenceId } : null,
  source: a.sourceKind && a.sourceId ? { kind: a.sourceKind, id: a.sourceId } : null,
  details: a.details,
  createdAt: a.createdAt,
});

/**
 * The alarm log. Reads and status changes: callers have checked alarmLog.read/manage, the account
 * must be reachable here, and a restricted caller sees only entries about twins and devices of its
 * permission scopes (alarm-visibility.ts); others answer 404 like missing ones. `write` is for producers inside the server (already authorized); its
 * listeners (integration flows) run after the commit, each failure logged and ignored, never
 * undoing or delaying the write.
 */
export class AlarmLogService implements AlarmEntryEvents {
  private readonly listeners: AlarmEntryListener[] = [];

  constructor(
    private readonly em: () => EntityManager,
    private readonly orm: MikroORM,
    private readonly accounts: AccountService,
    private readonly clock: () => Date,
    private readonly log: FastifyBaseLogger,
  ) {}

  onCreated(listener: AlarmEntryListener): void {
    this.listeners.push(listener);
  }

  /** Writes an entry on its own unit of work (background callers have no request context). */
  async write(input: AlarmInput): Promise<AlarmEntry> {
    const em = this.orm.em.fork();
    const alarm = new AlarmLog();
    alarm.account = em.getReference(Account, input.accountId);
    alarm.category = input.category.slice(0, 100);
    alarm.message = input.message.slice(0, 10_000);
    alarm.referenceType = input.reference?.type ?? null;
    alarm.referenceId = input.reference?.id ?? null;
    alarm.sourceKind = input.source?.kind ?? null;
    alarm.sourceId = input.source?.id ?? null;
    alarm.details = input.details ?? {};
    alarm.createdAt = alarm.updatedAt = this.clock();
    await em.persistAndFlush(alarm);
    const entry = alarmEntryOf(alarm);
    for (const listener of this.listeners) {
      // Listeners may be async: started here, awaited by nobody, failures logged.
      Promise.resolve()
        .then(() => listener(entry))
        .catch((error: unknown) => this.log.warn({ err: error, alarmId: entry.id }, 'alarm listener failed'));
    }
    return entry;
  }

  async list(
    principal: Principal,
    params: ListParams,
    filter: AlarmLogFilter,
  ): Promise<ListResult<AlarmLog>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const where: FilterQuery<AlarmLog> = { account };
    if (filter.status?.length) where.status = { $in: filter.status };
    if (filter.category) where.category = filter.category;
    if (filter.referenceType) where.referenceType = filter.referenceType;
    if (filter.referenceId) where.referenceId = filter.referenceId;
    if (params.search) where.message = { $ilike: likePattern(params.search) };
    const { sql, params: scopeParams } = visibleAlarmSql(principal, 'a');
    // The raw condition goes in with the list query's own alias; its parameters do not depend on it.
    if (sql !== 'TRUE')
      Object.assign(where, { [raw((alias) => visibleAlarmSql(principal, alias).sql, scopeParams)]: [] });
    const [rows, total] = await this.em().findAndCount(AlarmLog, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<AlarmLog> {
    const alarm = await this.em().findOne(AlarmLog, { id }, { populate: ['account'] });
    if (!alarm || !canReach(principal, alarm.account) || !(await this.visible(principal, id)))
      throw errors.notFound('Alarm log entry', id);
    return alarm;
  }

  private async visible(principal: Principal, id: string): Promise<boolean> {
    const visible = visibleAlarmSql(principal, 'a');
    if (visible.sql === 'TRUE') return true;
    const rows = await this.em().execute<unknown[]>(
      `SELECT 1 FROM alarm_logs a WHERE a.id = ? AND (${visible.sql})`,
      [id, ...visible.params],
    );
    return rows.length > 0;
  }

  /** Open → acknowledged; acknowledging again changes nothing; a closed entry stays closed (409). */
  async acknowledge(principal: Principal, id: string): Promise<AlarmLog> {
    const alarm = await this.get(principal, id);
    if (alarm.status === 'closed') {
      throw errors.conflict('ALARM_CLOSED', 'A closed alarm cannot be acknowledged', [
        { id, status: 'closed' },
      ]);
    }
    if (alarm.status === 'open') {
      alarm.status = 'acknowledged';
      alarm.acknowledgedAt = this.clock();
      alarm.acknowledgedBy = principal.id;
      await this.em().flush();
    }
    return alarm;
  }

  /** Open or acknowledged → closed; closing again changes nothing. */
  async close(principal: Principal, id: string): Promise<AlarmLog> {
    const alarm = await this.get(principal, id);
    if (alarm.status !== 'closed') {
      alarm.status = 'closed';
      alarm.closedAt = this.clock();
      alarm.closedBy = principal.id;
      await this.em().flush();
    }
    return alarm;
  }

  /** Entries not yet closed, per referenced object (alarm reports). */
  async openCountsByReference(
    accountId: string,
    referenceType: string,
    ids: string[],
  ): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ reference_id: string; n: string }>>(
        `SELECT reference_id, count(*) AS n FROM alarm_logs
          WHERE account_id = ? AND reference_type = ? AND status <> 'closed' AND reference_id IN (?)
          GROUP BY reference_id`,
        [accountId, referenceType, ids],
      );
    return new Map(rows.map((r) => [r.reference_id, Number(r.n)]));
  }
}
