import path from 'node:path';
import type { AccountService } from '../accounts/account.service.js';
import type { AuditService } from '../audit/audit.service.js';
import type { ConnectorService } from '../connectors/connector.service.js';
import type { AppContext } from '../context.js';
import type { OutgoingDispatch } from '../integration/ports.js';
import type { JobRunner } from '../jobs/job.runner.js';
import type { JobService } from '../jobs/job.service.js';
import { LeaderTimer } from '../platform/leader-timer.js';
import type { TimeSeriesQueryService } from '../timeseries/query/query.service.js';
import type { TimeSeriesReads } from '../timeseries/timeseries.types.js';
import { pruneExportFiles } from './export-files.js';
import { ExportPlanService } from './export-plan.service.js';
import { ExportRunsService } from './export-runs.service.js';

export const EXPORT_SCHEDULER_LOCK = 0x4558_5054; // "EXPT"
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Export plans (docs/exports.md): the plan resource, the `export` job kind, the scheduler that
 * queues due plans (one node, leader timer) and the housekeeping of export files.
 */
export function createExports(
  ctx: AppContext,
  deps: {
    accounts: AccountService;
    audit: AuditService;
    connectors: ConnectorService;
    jobs: JobService;
    jobRunner: JobRunner;
    reads: TimeSeriesReads;
    query: TimeSeriesQueryService;
    outgoing: OutgoingDispatch;
  },
) {
  const dir = path.join(ctx.config.dataDir, 'exports');
  const exportPlans = new ExportPlanService(ctx.em, deps.accounts, deps.audit, ctx.clock);
  const exportRuns = new ExportRunsService({
    em: ctx.em,
    orm: ctx.orm,
    accounts: deps.accounts,
    plans: exportPlans,
    jobs: deps.jobs,
    reads: deps.reads,
    query: deps.query,
    outgoing: deps.outgoing,
    clock: ctx.clock,
    log: ctx.log,
    options: {
      dir,
      mailAttachmentMaxBytes: ctx.config.exportMailAttachmentMaxBytes,
      linkValidMs: ctx.config.exportLinkHours * 3_600_000,
      publicUrl: ctx.config.publicUrl,
    },
  });
  deps.jobRunner.register(exportRuns.handler());
  deps.connectors.deletionGuards.push((connectorId) => exportPlans.mailConnectorBlockers(connectorId));
  let prunedAt = 0;
  const exportScheduler = new LeaderTimer('export-scheduler', {
    databaseUrl: String(ctx.orm.config.get('clientUrl')),
    lockKey: EXPORT_SCHEDULER_LOCK,
    everyMs: 10_000,
    clock: ctx.clock,
    log: ctx.log,
    round: async (now) => {
      await exportRuns.runDue(now);
      // Files of jobs the job housekeeping deleted (three months) go with them.
      if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        await pruneExportFiles(dir, (ids) => deps.jobs.existing(ids));
      }
    },
  });
  ctx.lifecycle.push(exportScheduler);
  return { exportPlans, exportRuns, exportScheduler };
}
