import { readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { RequestContext, type MikroORM } from '@mikro-orm/postgresql';
import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import { Account } from '../accounts/account.entity.js';
import type { Config } from '../config.js';
import type { AppContext } from '../context.js';
import type { JobRunner } from '../jobs/job.runner.js';
import type { Job } from '../jobs/job.entity.js';
import type { JobService } from '../jobs/job.service.js';
import type { JobHandler } from '../jobs/job.types.js';
import { withAdvisoryLock } from '../platform/db/advisory-lock.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { archiveName, archiveTime, isBeforeUpgradeArchive } from './backup.manifest.js';
import { createBackup } from './backup.service.js';

/** The job kind of scheduled backups (shown in the root account's jobs list). */
export const BACKUP_JOB = 'backup';
const SCHEDULE_LOCK = 0x5354_4c42; // "STLB"

const LAST_SUCCESS_SQL = `SELECT extract(epoch FROM max(finished_at))::float8 AS at FROM jobs WHERE type = ? AND status = 'finished'`;

/**
 * The `backup` job: one archive into STELLWERK_BACKUP_DIR, then the oldest archives beyond
 * STELLWERK_BACKUP_KEEP deleted (never those made before an upgrade). Not retryable: a node lost
 * mid-backup leaves a `.partial` file, and the next scheduled run makes a new archive.
 */
export function backupJob(config: Config, databaseUrl: string): JobHandler {
  return {
    type: BACKUP_JOB,
    retryable: false,
    async run(run) {
      run.setTotal(1);
      const result = await createBackup(
        {
          databaseUrl,
          embeddedDatabase: !config.databaseUrl,
          dataDir: config.dataDir,
          spoolDir: config.spoolDir,
          secretKey: config.secretKey,
        },
        { out: path.join(config.backupDir, archiveName(new Date())), reason: 'scheduled' },
      );
      const pruned = await pruneArchives(config.backupDir, config.backupKeep);
      run.advance(1);
      return {
        file: result.file,
        bytes: result.bytes,
        durationMs: result.durationMs,
        consistentPoint: result.manifest.consistentPoint.at,
        pruned,
      };
    },
  };
}

/** A `.partial` file this old was left by a backup that died (a running one writes it continuously). */
const STALE_PARTIAL_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes the oldest archives beyond `keep` (by the time in their names), and the `.partial` files
 * of backups that died; returns the deleted archives' names.
 */
export async function pruneArchives(dir: string, keep: number, now = new Date()): Promise<string[]> {
  const names = await readdir(dir);
  for (const name of names.filter(
    (n) => n.endsWith('.tar.gz.partial') && archiveTime(n.slice(0, -'.partial'.length)),
  )) {
    const file = path.join(dir, name);
    const { mtimeMs } = await stat(file).catch(() => ({ mtimeMs: now.getTime() }));
    if (now.getTime() - mtimeMs > STALE_PARTIAL_MS) await unlink(file).catch(() => undefined);
  }
  const archives = names
    .filter((name) => archiveTime(name) && !isBeforeUpgradeArchive(name))
    .sort()
    .reverse();
  const excess = archives.slice(keep);
  for (const name of excess) await unlink(path.join(dir, name)).catch(() => undefined);
  return excess;
}

/** The newest complete archive in `dir` and when it was made; undefined when there is none. */
export async function newestArchive(
  dir: string,
): Promise<{ file: string; at: Date; bytes: number } | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const newest = names
    .filter((name) => archiveTime(name))
    .sort((a, b) => archiveTime(a)!.getTime() - archiveTime(b)!.getTime())
    .at(-1);
  if (!newest) return undefined;
  const file = path.join(dir, newest);
  return { file, at: archiveTime(newest)!, bytes: (await stat(file)).size };
}

/**
 * Queues a `backup` job at each time of STELLWERK_BACKUP_SCHEDULE. Every node runs the timer; under
 * an advisory lock, the first to reach a given time queues its job and the others find it there.
 */
export class BackupScheduler implements Lifecycle {
  readonly name = 'backup-schedule';
  private cron: Cron | undefined;

  constructor(
    private readonly options: {
      schedule: string;
      databaseUrl: string;
      orm: MikroORM;
      jobs: JobService;
      log: FastifyBaseLogger;
    },
  ) {}

  start(): Promise<void> {
    this.cron = new Cron(this.options.schedule, { protect: true }, (cron: Cron) => {
      const at = cron.currentRun() ?? new Date();
      void this.enqueue(at).catch((error: unknown) =>
        this.options.log.warn({ err: error }, 'scheduled backup could not be queued'),
      );
    });
    this.options.log.info(
      { schedule: this.options.schedule, next: this.cron.nextRun()?.toISOString() },
      'scheduled backups on',
    );
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.cron?.stop();
    return Promise.resolve();
  }

  /** Queues the backup of the scheduled time `at` unless a node already did; returns the job or null. */
  async enqueue(at: Date): Promise<Job | null> {
    const scheduledFor = new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString();
    return withAdvisoryLock(this.options.databaseUrl, SCHEDULE_LOCK, () =>
      RequestContext.create(this.options.orm.em, async () => {
        // Inside the context the global EntityManager is its fork, as JobService.enqueue expects.
        const em = this.options.orm.em;
        const existing = await em
          .getConnection()
          .execute<Array<{ one: number }>>(
            `SELECT 1 AS one FROM jobs WHERE type = ? AND input ->> 'scheduledFor' = ?`,
            [BACKUP_JOB, scheduledFor],
          );
        if (existing.length > 0) return null;
        const root = await em.findOne(Account, { parent: null }, { orderBy: { createdAt: 'asc' } });
        if (!root) return null;
        return this.options.jobs.enqueue({
          account: root,
          type: BACKUP_JOB,
          input: { scheduledFor },
          total: 1,
        });
      }),
    );
  }
}

/** `stellwerk_backup_last_success_timestamp_seconds`, from the jobs table so that every node reports it. */
export function registerBackupMetrics(metrics: Metrics, orm: MikroORM): void {
  metrics.gauge(
    'stellwerk_backup_last_success_timestamp_seconds',
    'Unix time the last scheduled backup finished successfully (absent before the first)',
    [],
    async (gauge) => {
      gauge.reset();
      try {
        const rows = await orm.em
          .getConnection()
          .execute<Array<{ at: number | null }>>(LAST_SUCCESS_SQL, [BACKUP_JOB]);
        if (rows[0]?.at) gauge.set(rows[0].at);
      } catch {
        // The database is down: the family stays empty rather than failing the whole scrape.
      }
    },
  );
}

/** The backup job kind, its metric and (when STELLWERK_BACKUP_SCHEDULE is set) the scheduler. */
export function wireBackups(ctx: AppContext, runner: JobRunner, jobs: JobService): void {
  const databaseUrl = String(ctx.orm.config.get('clientUrl'));
  runner.register(backupJob(ctx.config, databaseUrl));
  registerBackupMetrics(ctx.metrics, ctx.orm);
  if (ctx.config.backupSchedule)
    ctx.lifecycle.push(
      new BackupScheduler({
        schedule: ctx.config.backupSchedule,
        databaseUrl,
        orm: ctx.orm,
        jobs,
        log: ctx.log,
      }),
    );
}
