import type { EntityManager, FilterQuery, MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { MAIL_KIND_TYPES } from '../connectors/kinds/index.js';
import type { OutgoingDispatch } from '../integration/ports.js';
import {
  recordScopes,
  recordedWithin,
  sameScopes,
  seesRecorded,
} from '../permission-scopes/recorded-scopes.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { nextRun, scheduleDetail, type Schedule } from '../platform/schedule.js';
import type { AlarmLogService } from './alarm-log.service.js';
import { alarmReportViews, type AlarmReportView } from './alarm-report-views.js';
import { AlarmReport, SmartGroup, type AlarmReportResult } from './smart-group.entity.js';
import type { SmartGroupService } from './smart-group.service.js';

export const ALARM_REPORT_SORTABLE = ['title', 'createdAt', 'updatedAt', 'lastRunAt', 'nextRunAt'] as const;

/** The on-demand action's name in the spec. */
export const EXECUTE_REPORT_ACTION = 'activityLog.alarmReport.executeReport';

export interface AlarmReportInput {
  title?: string;
  smartGroupId?: string;
  schedule?: Schedule | null;
  alarmHealthStates?: string[];
  mailConnectorId?: string | null;
  mailTo?: string[];
}

const REFERENCE_TYPE = { device: 'virtualDevice', twin: 'digitalTwin' } as const;

/**
 * Alarm reports: which members of a smart group are in an alarm state — a device whose health
 * state is one of `alarmHealthStates`, or any member with alarm log entries not yet closed that
 * reference it. Run on a schedule (cron or interval in the account's time zone, by the scheduler)
 * and on demand (`activityLog.alarmReport.executeReport`); each run stores its result as
 * `lastResult` and, with a mail connector, e-mails it through OutgoingDispatch. Callers of the
 * principal methods have checked alarmReport.read/manage.
 *
 * Permission scopes: a report records the scopes of whoever saved it last and a run looks only at
 * members of those scopes; a restricted reader sees a report only when it has all of them
 * (permission-scopes/recorded-scopes.ts), and a last result without members it no longer sees.
 */
export class AlarmReportService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly orm: MikroORM,
    private readonly accounts: AccountService,
    private readonly groups: SmartGroupService,
    private readonly alarms: AlarmLogService,
    private readonly outgoing: OutgoingDispatch,
    private readonly clock: () => Date,
    private readonly log: FastifyBaseLogger,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<AlarmReportView>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where: FilterQuery<AlarmReport> = {
      $and: [
        { account },
        recordedWithin<AlarmReport>(principal, 'permissionScopeIds'),
        params.search ? { title: { $ilike: likePattern(params.search) } } : {},
      ],
    };
    const [rows, total] = await this.em().findAndCount(AlarmReport, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(await alarmReportViews(this.em(), principal, rows), total, params);
  }

  /** One report as the caller may see it (404 when hidden, exactly like a missing one). */
  async show(principal: Principal, id: string): Promise<AlarmReportView> {
    return this.view(principal, await this.get(principal, id));
  }

  private async get(principal: Principal, id: string): Promise<AlarmReport> {
    const report = await this.em().findOne(AlarmReport, { id }, { populate: ['account'] });
    if (
      !report ||
      !canReach(principal, report.account) ||
      !seesRecorded(principal, report.permissionScopeIds)
    )
      throw errors.notFound('Alarm report', id);
    return report;
  }

  private async view(principal: Principal, report: AlarmReport): Promise<AlarmReportView> {
    return (await alarmReportViews(this.em(), principal, [report]))[0]!;
  }

  async create(
    principal: Principal,
    input: AlarmReportInput & { smartGroupId: string },
  ): Promise<AlarmReportView> {
    const group = await this.groups.get(principal, input.smartGroupId);
    const report = new AlarmReport();
    report.account = group.account;
    report.smartGroup = group;
    this.record(principal, report);
    await this.apply(report, input);
    await this.em().persistAndFlush(report);
    return this.view(principal, report);
  }

  async update(principal: Principal, id: string, input: AlarmReportInput): Promise<AlarmReportView> {
    const report = await this.get(principal, id);
    this.record(principal, report);
    await this.apply(report, input);
    await this.em().flush();
    return this.view(principal, report);
  }

  /** The report runs with the view of whoever saved it last; a result under another one is dropped. */
  private record(principal: Principal, report: AlarmReport): void {
    const scopes = recordScopes(principal);
    if (!sameScopes(report.permissionScopeIds, scopes)) report.lastResult = null;
    report.permissionScopeIds = scopes;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.em().removeAndFlush(await this.get(principal, id));
  }

  /** The on-demand action (activityLog.alarmReport.executeReport). */
  async execute(principal: Principal, id: string): Promise<AlarmReportView> {
    const report = await this.get(principal, id);
    await this.run(report, 'manual', this.clock(), this.em());
    return this.view(principal, report);
  }

  /** Every scheduled report due at `now` (the scheduler; tests call it with their clock). */
  async runDue(now: Date): Promise<string[]> {
    const em = this.orm.em.fork();
    const due = await em.find(
      AlarmReport,
      { nextRunAt: { $lte: now } },
      { populate: ['account'], limit: 100, orderBy: { nextRunAt: 'asc' } },
    );
    const ran: string[] = [];
    for (const report of due) {
      try {
        report.nextRunAt = report.schedule
          ? nextRun(report.schedule, report.account.timeZone, now, report.scheduleAnchor)
          : null;
        await em.flush();
        await this.run(report, 'schedule', now, em);
        ran.push(report.id);
      } catch (error) {
        this.log.warn({ err: error, reportId: report.id }, 'alarm report run failed');
      }
    }
    return ran;
  }

  private async run(
    report: AlarmReport,
    trigger: AlarmReportResult['trigger'],
    now: Date,
    em: EntityManager,
  ): Promise<void> {
    const group = await em.findOneOrFail(SmartGroup, { id: report.smartGroup.id }, { populate: ['account'] });
    const members = await this.groups.members(group, em, report.permissionScopeIds);
    const open = await this.alarms.openCountsByReference(
      report.account.id,
      REFERENCE_TYPE[group.target],
      members.map((m) => m.id),
    );
    const inAlarm = members
      .map((m) => ({ ...m, openAlarms: open.get(m.id) ?? 0 }))
      .filter(
        (m) =>
          m.openAlarms > 0 ||
          (m.healthState !== undefined && report.alarmHealthStates.includes(m.healthState)),
      );
    const result: AlarmReportResult = {
      at: now.toISOString(),
      trigger,
      target: group.target,
      members: members.length,
      inAlarm,
      mail: 'none',
    };
    if (report.mailConnector) result.mail = await this.mail(report, group, result);
    report.lastRunAt = now;
    report.lastResult = result;
    await em.flush();
  }

  private async mail(
    report: AlarmReport,
    group: SmartGroup,
    result: AlarmReportResult,
  ): Promise<AlarmReportResult['mail']> {
    const lines = result.inAlarm.map(
      (m) =>
        `- ${m.title} (${m.id})${m.healthState ? ` health ${m.healthState}` : ''}, open alarms: ${m.openAlarms}`,
    );
    try {
      const sent = await this.outgoing.send(
        report.account.id,
        report.mailConnector!.id,
        {
          subject: `Alarm report "${report.title}": ${result.inAlarm.length} of ${result.members} in alarm`,
          body: [
            `Smart group: ${group.title} (${group.target}s)`,
            `Run: ${result.at} (${result.trigger})`,
            '',
            ...(lines.length ? lines : ['Nothing in alarm.']),
          ].join('\n'),
          ...(report.mailTo.length ? { to: report.mailTo } : {}),
        },
        { kind: 'alarm-report', id: report.id },
      );
      return sent.queued ? 'queued' : 'not-queued';
    } catch (error) {
      this.log.warn({ err: error, reportId: report.id }, 'alarm report mail failed');
      return 'failed';
    }
  }

  /** Connector deletion guard: reports that mail through this connector. */
  async mailConnectorBlockers(connectorId: string): Promise<unknown[]> {
    const reports = await this.em().find(
      AlarmReport,
      { mailConnector: connectorId },
      { fields: ['id', 'title'], limit: 20 },
    );
    return reports.map((r) => ({ type: 'alarmReport', id: r.id, title: r.title }));
  }

  private async apply(report: AlarmReport, input: AlarmReportInput): Promise<void> {
    if (input.title !== undefined) report.title = input.title.trim();
    if (!report.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.alarmHealthStates !== undefined)
      report.alarmHealthStates = [...new Set(input.alarmHealthStates)];
    if (input.mailTo !== undefined) report.mailTo = [...new Set(input.mailTo)];
    if (input.smartGroupId !== undefined && input.smartGroupId !== report.smartGroup.id) {
      const group = await this.em().findOne(SmartGroup, { id: input.smartGroupId, account: report.account });
      if (!group)
        throw errors.unprocessable('CONFIG_NOT_ASSIGNED', 'The smart group is not one of this account', [
          problem('/smartGroupId', 'notFound', { id: input.smartGroupId }),
        ]);
      report.smartGroup = group;
    }
    if (input.mailConnectorId !== undefined) {
      if (input.mailConnectorId === null) report.mailConnector = null;
      else {
        const mail = await this.em().findOne(Connector, {
          id: input.mailConnectorId,
          account: report.account,
        });
        if (!mail || !MAIL_KIND_TYPES.includes(mail.type)) {
          throw errors.unprocessable(
            'INVALID_MAIL_CONNECTOR',
            `mailConnectorId must name an ${MAIL_KIND_TYPES.join(' or ')} connector of this account`,
            // A connector of another kind has no keyword; the message names the kinds.
            [
              mail
                ? { path: '/mailConnectorId' }
                : problem('/mailConnectorId', 'notFound', { id: input.mailConnectorId }),
            ],
          );
        }
        report.mailConnector = mail;
      }
    }
    if (input.schedule !== undefined) {
      if (input.schedule !== null) {
        if (input.schedule.at !== undefined)
          throw errors.validation('a report runs on cron or intervalSeconds', [{ path: '/schedule' }]);
        const found = scheduleDetail('/schedule', input.schedule, report.account.timeZone);
        if (found) throw errors.validation(found.message, [found]);
      }
      report.schedule = input.schedule;
      const now = this.clock();
      report.scheduleAnchor = now;
      report.nextRunAt = report.schedule ? nextRun(report.schedule, report.account.timeZone, now, now) : null;
    }
  }
}
