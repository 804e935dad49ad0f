import path from 'node:path';
import { RequestContext, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { AccountService } from '../accounts/account.service.js';
import type { JobService } from '../jobs/job.service.js';
import type { JobHandler } from '../jobs/job.types.js';
import type { OutgoingDispatch } from '../integration/ports.js';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { seesRecorded } from '../permission-scopes/recorded-scopes.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { randomToken, safeEqual, sha256 } from '../platform/crypto/tokens.js';
import { errors } from '../platform/errors.js';
import { nextRun } from '../platform/schedule.js';
import { selectDevices, type DeviceCondition } from '../devices/device-selection.queries.js';
import { statesOfDevices, statesOfTwins } from '../states/state-selection.queries.js';
import type { TimeSeriesQueryService } from '../timeseries/query/query.service.js';
import type { TimeSeriesReads } from '../timeseries/timeseries.types.js';
import { selectTwins, type TwinCondition } from '../twins/twin-selection.queries.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';
import { estimateAverageRows, type ExportReads, type ExportSource } from './export-engine.js';
import { deviceCells, twinCells } from './export-columns.js';
import { exportCsv, exportPreview } from './export-csv.js';
import { exportFileName, writeExportFile } from './export-files.js';
import { ExportPlan } from './export-plan.entity.js';
import { subjectOf, type ExportDefinition } from './export-plan.types.js';
import { checkDefinition, type ExportPlanService } from './export-plan.service.js';
import { resolveRange } from './export-range.js';

export const EXPORT_JOB = 'export';

export interface ExportRunsOptions {
  /** Where finished files live (`<data dir>/exports`). */
  dir: string;
  /** A file up to this size is attached to the e-mail; a larger one is sent as a link. */
  mailAttachmentMaxBytes: number;
  /** How long a mailed download link works. */
  linkValidMs: number;
  publicUrl: string;
}

/** What an export job records as its result (GET /jobs shows it). */
export interface ExportJobResult {
  planId: string;
  file: string;
  bytes: number;
  rows: number;
  from: string;
  to: string;
  mail: 'none' | 'attached' | 'link';
  linkExpiresAt?: string;
  /** sha256 of the mailed link's secret part; the link itself is only in the mail. */
  linkHash?: string;
  /** The name a download and a mail attachment carry: the plan's title and the period's first and last day. */
  downloadName?: string;
}

/** An export file as the routes send it: where it lies and the name the reader's browser saves. */
export interface ExportFile {
  path: string;
  name: string;
  downloadName: string;
}

/**
 * Runs export plans: on demand and by schedule each run is an `export` job (queue position,
 * progress rows written of an estimated total, `failed` with its reason), whose file is written to
 * the data directory and downloaded with HTTP ranges, or e-mailed through the plan's `smtp-mail`
 * connector (attached up to a size, else a time-limited link). Also the live preview.
 */
export class ExportRunsService {
  constructor(
    private readonly deps: {
      em: () => EntityManager;
      orm: MikroORM;
      accounts: AccountService;
      plans: ExportPlanService;
      jobs: JobService;
      reads: TimeSeriesReads;
      query: TimeSeriesQueryService;
      outgoing: OutgoingDispatch;
      clock: () => Date;
      log: FastifyBaseLogger;
      options: ExportRunsOptions;
    },
  ) {}

  /** The first 20 rows of a definition over the caller's own twins or devices (the plan editor's preview). */
  async preview(principal: Principal, input: ExportDefinition & { accountId?: string }) {
    checkDefinition(input);
    const account = await this.deps.accounts.actingAccount(principal, input.accountId);
    const scopes = scopeFilter(principal);
    const scopeIds = scopes.restricted ? [...scopes.scopeIds] : null;
    const range = resolveRange(input.range, input.timeZone, this.deps.clock());
    const source = await this.source(this.deps.em(), input, account.id, scopeIds);
    const preview = await exportPreview(input, source, this.reads(account.id, scopeIds), range);
    return { ...preview, from: range.from.toISOString(), to: range.to.toISOString() };
  }

  /** Queues a run now (on demand). */
  async run(principal: Principal, id: string) {
    const plan = await this.deps.plans.get(principal, id);
    return this.enqueue(
      plan,
      this.deps.em(),
      'manual',
      this.deps.clock(),
      principal.kind === 'user' ? principal.id : null,
    );
  }

  /** Queues a run of every scheduled plan due at `now` (the scheduler; tests call it with their clock). */
  async runDue(now: Date): Promise<string[]> {
    const em = this.deps.orm.em.fork();
    // Outside a request: the job service's `em()` reads this context.
    return RequestContext.create(em, () => this.queueDue(em, now));
  }

  private async queueDue(em: EntityManager, now: Date): Promise<string[]> {
    const due = await em.find(
      ExportPlan,
      { nextRunAt: { $lte: now } },
      { populate: ['account'], limit: 100, orderBy: { nextRunAt: 'asc' } },
    );
    const queued: string[] = [];
    for (const plan of due) {
      // The range is resolved at the scheduled time, so a late round exports the same period.
      const at = plan.nextRunAt!;
      plan.nextRunAt = plan.schedule ? nextRun({ cron: plan.schedule }, plan.timeZone, now, now) : null;
      await em.flush();
      try {
        await this.enqueue(plan, em, 'schedule', at, null);
        queued.push(plan.id);
      } catch (error) {
        this.deps.log.warn({ err: error, planId: plan.id }, 'scheduled export could not be queued');
      }
    }
    return queued;
  }

  private async enqueue(
    plan: ExportPlan,
    em: EntityManager,
    trigger: string,
    at: Date,
    userId: string | null,
  ) {
    const job = await this.deps.jobs.enqueue({
      account: plan.account,
      type: EXPORT_JOB,
      subjectId: plan.id,
      input: { planId: plan.id, trigger, at: at.toISOString() },
      createdByUserId: userId,
    });
    plan.lastJobId = job.id;
    plan.lastRunAt = this.deps.clock();
    await em.flush();
    return job;
  }

  /**
   * An export job's file for a reader of its plan: only a finished job of a plan the reader sees
   * (404 otherwise, as for a missing one).
   */
  async file(principal: Principal, jobId: string): Promise<ExportFile> {
    const view = await this.deps.jobs.get(principal, jobId).catch(() => null);
    const job = view?.job;
    const scopes = (job?.input.scopes as RecordedScopes | undefined) ?? null;
    if (!job || job.type !== EXPORT_JOB || job.status !== 'finished' || !seesRecorded(principal, scopes))
      throw errors.notFound('Export file', jobId);
    return this.exportFile(job.result as unknown as ExportJobResult);
  }

  /** The file a mailed link names, while the link is valid (404 otherwise). */
  async fileByLink(token: string): Promise<ExportFile> {
    const [jobId, secret] = token.split('.');
    const [view] = jobId && secret ? await this.deps.jobs.views([jobId]).catch(() => []) : [];
    const result = view?.job.result as unknown as ExportJobResult | undefined;
    const valid =
      view?.job.status === 'finished' &&
      result?.linkHash !== undefined &&
      safeEqual(result.linkHash, sha256(secret!)) &&
      Date.parse(result.linkExpiresAt ?? '') > this.deps.clock().getTime();
    if (!valid) throw errors.notFound('Export file');
    return this.exportFile(result);
  }

  private exportFile(result: ExportJobResult): ExportFile {
    // Files of jobs written before download names were recorded keep their job-id name.
    return {
      path: path.join(this.deps.options.dir, result.file),
      name: result.file,
      downloadName: result.downloadName ?? result.file,
    };
  }

  /** The `export` job kind. Not retryable: a rerun would mail twice. */
  handler(): JobHandler {
    return {
      type: EXPORT_JOB,
      retryable: false,
      run: async (ctx) => {
        const planId = String(ctx.job.input.planId);
        const plan = await ctx.em.findOne(
          ExportPlan,
          { id: planId },
          { populate: ['account', 'mailConnector'] },
        );
        if (!plan) throw new Error(`The export plan ${planId} no longer exists`);
        const accountId = plan.account.id;
        const scopes = plan.permissionScopeIds;
        // Recorded so downloads check the plan's scopes as they were when the file was written.
        ctx.job.input = { ...ctx.job.input, scopes };
        await ctx.em.flush();
        const range = resolveRange(plan.range, plan.timeZone, new Date(String(ctx.job.input.at)));
        const source = await this.source(ctx.em, plan, accountId, scopes);
        const reads = this.reads(accountId, scopes);
        ctx.setTotal(await this.estimate(plan, source, reads, range));
        await ctx.flush();
        let rows = 0;
        const written = await writeExportFile(
          this.deps.options.dir,
          ctx.job.id,
          plan.format.gzip,
          exportCsv(plan, source, reads, range, (count) => {
            rows += count;
            ctx.advance(count);
          }),
        );
        const result: ExportJobResult = {
          planId,
          file: exportFileName(ctx.job.id, plan.format.gzip),
          bytes: written.bytes,
          rows,
          from: range.from.toISOString(),
          to: range.to.toISOString(),
          mail: 'none',
          downloadName: downloadName(plan, range, exportFileName(ctx.job.id, plan.format.gzip)),
        };
        if (plan.mailConnector) await this.mail(plan, written.file, result, ctx.job.id);
        ctx.setTotal(rows);
        return result as unknown as Record<string, unknown>;
      },
    };
  }

  private async mail(plan: ExportPlan, file: string, result: ExportJobResult, jobId: string): Promise<void> {
    const { options } = this.deps;
    const attach = result.bytes <= options.mailAttachmentMaxBytes;
    const lines = [
      `Export plan: ${plan.title}`,
      `Period: ${result.from} – ${result.to} (${plan.timeZone})`,
      `Rows: ${result.rows}`,
    ];
    const message = { subject: `Export "${plan.title}"`, ...(plan.mailTo.length ? { to: plan.mailTo } : {}) };
    let body: string;
    let attachments: Array<{ filename: string; path: string }> | undefined;
    if (attach) {
      result.mail = 'attached';
      attachments = [{ filename: result.downloadName ?? result.file, path: file }];
      body = [...lines, '', 'The file is attached.'].join('\n');
    } else {
      const secret = randomToken();
      const expires = new Date(this.deps.clock().getTime() + options.linkValidMs);
      result.mail = 'link';
      result.linkHash = sha256(secret);
      result.linkExpiresAt = expires.toISOString();
      const url = `${options.publicUrl.replace(/\/$/, '')}/xapi/v1/export-files/${jobId}.${secret}`;
      body = [
        ...lines,
        '',
        `The file (${result.bytes} bytes) is too large to attach. Download it until ${result.linkExpiresAt}:`,
        url,
      ].join('\n');
    }
    const sent = await this.deps.outgoing.send(
      plan.account.id,
      plan.mailConnector!.id,
      { ...message, body, ...(attachments ? { attachments } : {}) },
      { kind: 'export-plan', id: plan.id },
    );
    // The file exists, but the plan promised a mail: a run that cannot send it has not done its work.
    if (!sent.queued)
      throw new Error(`The e-mail could not be queued (${sent.reason}); the file is ${result.file}`);
  }

  /**
   * The subjects and series of a definition within the account and `scopes`: twins with their data
   * states, or devices with the data states fed by them, the latter only on twins the scopes see
   * too (as the query engine reads them, so raw rows and averages agree).
   */
  private async source(
    em: EntityManager,
    def: ExportDefinition,
    accountId: string,
    scopes: RecordedScopes,
  ): Promise<ExportSource> {
    const { operator, conditions } = def.selection;
    if (subjectOf(def) === 'devices') {
      const devices = await selectDevices(em, {
        accountId,
        scopes,
        operator,
        // checkDefinition has refused the fields the subject does not have.
        conditions: conditions as DeviceCondition[],
      });
      const states = await statesOfDevices(
        em,
        devices.map((d) => d.id),
        def.selection.states,
        visibleTwinSql({ permissionScopeIds: scopes }, 't'),
      );
      return {
        subjects: devices.map((d) => ({ id: d.id, cells: deviceCells(def, d) })),
        states: states.map((s) => ({ id: s.id, subjectId: s.deviceId, key: s.key, unit: s.unit })),
      };
    }
    const twins = await selectTwins(em, {
      accountId,
      scopes,
      operator,
      conditions: conditions as TwinCondition[],
    });
    const states = await statesOfTwins(
      em,
      twins.map((t) => t.id),
      def.selection.states,
    );
    return {
      subjects: twins.map((t) => ({ id: t.id, cells: twinCells(def, t) })),
      states: states.map((s) => ({ id: s.id, subjectId: s.twinId, key: s.key, unit: s.unit })),
    };
  }

  private reads(accountId: string, scopes: RecordedScopes): ExportReads {
    return {
      readPoints: (filter) => this.deps.reads.readPoints(filter),
      query: (text) =>
        this.deps.query.runIn({ accountId, includeSubAccounts: false, permissionScopeIds: scopes }, text),
    };
  }

  /** Rows to expect: exact for averages, the points of the range for raw exports (counted by PostgreSQL only). */
  private async estimate(
    def: ExportDefinition,
    source: ExportSource,
    reads: ExportReads,
    range: { from: Date; to: Date },
  ) {
    if (source.states.length === 0) return 0;
    if (def.shape.average) return estimateAverageRows(def, source, range);
    const target = await this.deps.reads.servingTarget().catch(() => null);
    if (target?.kind !== 'postgres' || source.states.length > 1000) return 0;
    const ids = source.states.map((s) => `'${s.id}'`).join(', ');
    const answer = await reads.query(
      `SELECT count(*) WHERE state.id IN (${ids}) AND time >= '${range.from.toISOString()}' AND time < '${range.to.toISOString()}'`,
    );
    const points = Number(answer.rows[0]?.[0] ?? 0);
    if (def.shape.layout === 'points') return points;
    // One row per subject and instant: as many as the points when each packet carries one state.
    const perSubject =
      source.states.length / Math.max(1, new Set(source.states.map((s) => s.subjectId)).size);
    return Math.round(points / perSubject);
  }
}

/** A plan title as a file name: letters, digits, dot, dash and underscore. */
const safeName = (title: string) => title.replace(/[^\p{L}\p{N}._-]+/gu, '_').slice(0, 80) || 'export';

/**
 * `Boiler_report_2026-11-01_2026-11-28.csv.gz`: the plan's title and the first and last day of the
 * exported period [from, to) in the plan's time zone (one day when both are the same), with the
 * stored file's extension, so a folder of downloads sorts and says what each file covers.
 */
export function downloadName(
  plan: Pick<ExportPlan, 'title' | 'timeZone'>,
  range: { from: Date; to: Date },
  storedFile: string,
): string {
  const dayOf = new Intl.DateTimeFormat('en-CA', {
    timeZone: plan.timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  const first = dayOf.format(range.from);
  // `to` is exclusive: a period ending at midnight ends on the day before.
  const last = dayOf.format(new Date(Math.max(range.from.getTime(), range.to.getTime() - 1)));
  const days = first === last ? first : `${first}_${last}`;
  return `${safeName(plan.title)}_${days}${storedFile.slice(storedFile.indexOf('.'))}`;
}
