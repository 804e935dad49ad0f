import { raw, type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import type { AlarmEntry, AlarmEntryEvents, AlarmEntryListener, AlarmStatus } from '../integration/ports.js';
import { newId } from '../platform/crypto/ids.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import {
  AlarmLog,
  DEFAULT_ALARM_SEVERITY,
  NO_REFERENCE,
  severityRank,
  type AlarmSeverity,
} from './alarm-log.entity.js';
import { visibleAlarmSql } from './alarm-visibility.js';

export const ALARM_LOG_SORTABLE = [
  'createdAt',
  'updatedAt',
  'lastSeenAt',
  'category',
  'status',
  'severity',
  'occurrenceCount',
] as const;

/** `severity` sorts by rank (critical first when descending), not by its name. */
const SORT_COLUMN: Record<string, string> = { severity: 'severityRank' };

export interface AlarmLogFilter {
  accountId?: string;
  status?: AlarmStatus[];
  severity?: AlarmSeverity[];
  category?: string;
  referenceType?: string;
  referenceId?: string;
  search?: string;
}

/** `where` narrowed to the entries visible within the principal's permission scopes. */
function withinScopes(principal: Principal, where: FilterQuery<AlarmLog>): FilterQuery<AlarmLog> {
  const { sql, params } = visibleAlarmSql(principal, 'a');
  // The raw condition goes in with the query's own alias; its parameters do not depend on it.
  if (sql !== 'TRUE')
    Object.assign(where, { [raw((alias) => visibleAlarmSql(principal, alias).sql, params)]: [] });
  return where;
}

/** Listeners told about entries after a change was committed: new, repeated, acknowledged, closed. */
export type AlarmChangeListener = (entries: AlarmEntry[]) => void;

/** What a producer (rule, monitoring rule, report, API caller) writes. */
export interface AlarmInput {
  accountId: string;
  category: string;
  message: string;
  reference?: { type: string; id: string } | null;
  source?: { kind: string; id: string } | null;
  severity?: AlarmSeverity;
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
  severity: a.severity,
  occurrenceCount: a.occurrenceCount,
  lastSeenAt: a.lastSeenAt,
  details: a.details,
  createdAt: a.createdAt,
});

/**
 * The alarm log. Reads and status changes: callers have checked alarmLog.read/manage, the account
 * must be reachable here, and a restricted caller sees only entries about twins and devices of its
 * permission scopes (alarm-visibility.ts); others answer 404 like missing ones. `write` and
 * `clear` are for producers inside the server (already authorized). `onCreated` listeners
 * (integration flows) hear of new entries only, `onChanged` listeners (live push) of every change;
 * both run after the commit, each failure logged and ignored, never undoing or delaying the write.
 */
export class AlarmLogService implements AlarmEntryEvents {
  private readonly listeners: AlarmEntryListener[] = [];
  private readonly changeListeners: AlarmChangeListener[] = [];

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

  onChanged(listener: AlarmChangeListener): void {
    this.changeListeners.push(listener);
  }

  /**
   * Writes an entry on its own unit of work (background callers have no request context). An entry
   * of the same source about the same reference that is not closed yet takes the occurrence
   * instead: its count goes up, `lastSeenAt`, message, severity and details become the new ones,
   * its status stays. One statement, so writers on several nodes never open two entries.
   */
  async write(input: AlarmInput): Promise<AlarmEntry> {
    const severity = input.severity ?? DEFAULT_ALARM_SEVERITY;
    const now = this.clock();
    const values = [
      newId(),
      input.accountId,
      input.category.slice(0, 100),
      input.message.slice(0, 10_000),
      input.reference?.type ?? null,
      input.reference?.id ?? null,
      input.source?.kind ?? null,
      input.source?.id ?? null,
      severity,
      severityRank(severity),
      JSON.stringify(input.details ?? {}),
      now,
    ];
    const insert = `INSERT INTO alarm_logs (id, account_id, category, message, reference_type, reference_id,
        source_kind, source_id, severity, severity_rank, details, status, occurrence_count,
        last_seen_at, created_at, updated_at)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, 'open', 1, t, t, t FROM (SELECT ?::timestamptz AS t) n`;
    const dedup = input.source
      ? ` ON CONFLICT (account_id, source_kind, source_id, coalesce(reference_type, ''),
            coalesce(reference_id, '${NO_REFERENCE}'::uuid))
          WHERE status <> 'closed' AND source_kind IS NOT NULL AND source_id IS NOT NULL
          DO UPDATE SET occurrence_count = alarm_logs.occurrence_count + 1,
            last_seen_at = excluded.last_seen_at, updated_at = excluded.updated_at,
            message = excluded.message, severity = excluded.severity,
            severity_rank = excluded.severity_rank, details = excluded.details`
      : '';
    const em = this.orm.em.fork();
    const [row] = await em
      .getConnection()
      .execute<Array<{ id: string; inserted: boolean }>>(
        `${insert}${dedup} RETURNING id, (xmax = 0) AS inserted`,
        values,
      );
    const alarm = await em.findOneOrFail(AlarmLog, { id: row!.id });
    const entry = alarmEntryOf(alarm);
    if (row!.inserted) this.tell(this.listeners, entry);
    this.changed([entry]);
    return entry;
  }

  /**
   * Closes the entry of `source` about `reference` that is not closed yet, because the condition
   * that raised it no longer holds (reason `cleared`, `clearedBy` the source); null when there is none.
   */
  async clear(
    accountId: string,
    source: { kind: string; id: string },
    reference: { type: string; id: string } | null,
  ): Promise<AlarmEntry | null> {
    const em = this.orm.em.fork();
    const now = this.clock();
    const rows = await em.getConnection().execute<Array<{ id: string }>>(
      `UPDATE alarm_logs SET status = 'closed', closed_at = ?, closed_by = NULL, close_reason = 'cleared',
              cleared_by_kind = ?, cleared_by_id = ?, updated_at = ?
        WHERE account_id = ? AND source_kind = ? AND source_id = ? AND status <> 'closed'
          AND coalesce(reference_type, '') = ? AND coalesce(reference_id, '${NO_REFERENCE}'::uuid) = ?
        RETURNING id`,
      [
        now,
        source.kind,
        source.id,
        now,
        accountId,
        source.kind,
        source.id,
        reference?.type ?? '',
        reference?.id ?? NO_REFERENCE,
      ],
    );
    if (rows.length === 0) return null;
    const alarm = await em.findOneOrFail(AlarmLog, { id: rows[0]!.id });
    const entry = alarmEntryOf(alarm);
    this.changed([entry]);
    return entry;
  }

  /** Tells the change listeners (live push) about committed entries. */
  changed(entries: AlarmEntry[]): void {
    if (entries.length === 0) return;
    for (const listener of this.changeListeners) this.tell([listener], entries);
  }

  private tell<T>(listeners: Array<(value: T) => unknown>, value: T): void {
    for (const listener of listeners) {
      // Listeners may be async: started here, awaited by nobody, failures logged.
      Promise.resolve()
        .then(() => listener(value))
        .catch((error: unknown) => this.log.warn({ err: error }, 'alarm listener failed'));
    }
  }

  /** The query of `list` (also what a bulk action by filter selects); `account` is already reachable. */
  where(principal: Principal, account: Account, filter: AlarmLogFilter): FilterQuery<AlarmLog> {
    const where: FilterQuery<AlarmLog> = { account };
    if (filter.status?.length) where.status = { $in: filter.status };
    if (filter.severity?.length) where.severity = { $in: filter.severity };
    if (filter.category) where.category = filter.category;
    if (filter.referenceType) where.referenceType = filter.referenceType;
    if (filter.referenceId) where.referenceId = filter.referenceId;
    if (filter.search) where.message = { $ilike: likePattern(filter.search) };
    return withinScopes(principal, where);
  }

  /** The entries among `ids` the principal sees within its permission scopes (tenancy checked by the caller). */
  visibleAmong(principal: Principal, ids: string[]): FilterQuery<AlarmLog> {
    return withinScopes(principal, { id: { $in: ids } });
  }

  async list(
    principal: Principal,
    params: ListParams,
    filter: AlarmLogFilter,
  ): Promise<ListResult<AlarmLog>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const where = this.where(principal, account, {
      ...filter,
      ...(params.search ? { search: params.search } : {}),
    });
    const [rows, total] = await this.em().findAndCount(AlarmLog, where, {
      orderBy: [
        ...params.orderBy.map((o) => ({ [SORT_COLUMN[o.field] ?? o.field]: o.direction })),
        { id: 'asc' },
      ],
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
      this.changed([alarmEntryOf(alarm)]);
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
      alarm.closeReason = 'manual';
      await this.em().flush();
      this.changed([alarmEntryOf(alarm)]);
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
