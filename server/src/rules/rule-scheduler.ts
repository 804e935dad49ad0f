import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { AdvisoryLease } from '../platform/db/advisory-lock.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import { nextRun } from '../platform/schedule.js';
import type { RuleRunner } from './rule-runner.js';
import type { RuleCommand, TimeTrigger } from './rule.types.js';

/**
 * Time rules: every tick (1 s) the leader (an advisory lease) runs the rules whose `next_run_at`
 * has come, in the account's time zone, after moving `next_run_at` on — so a failing command is
 * not repeated every tick, and runs missed while no node was up collapse into one. A rule whose
 * twin is outside its recorded permission scopes does not run (RuleRunner.fire).
 */

export const RULE_SCHEDULER_LOCK = 0x5255_4c45; // "RULE"
const BATCH = 100;

export class RuleScheduler implements Lifecycle {
  readonly name = 'rule-scheduler';
  private readonly lease: AdvisoryLease;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      databaseUrl: string;
      runner: RuleRunner;
      clock: () => Date;
      log: FastifyBaseLogger;
      tickMs?: number;
    },
  ) {
    this.lease = new AdvisoryLease(deps.databaseUrl, RULE_SCHEDULER_LOCK);
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.tick(), this.deps.tickMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.lease.release();
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = (async () => {
      try {
        if (await this.lease.acquire()) await this.runDue(this.deps.clock());
      } catch (error) {
        this.deps.log.warn({ err: error }, 'rule scheduler: round failed');
      }
    })();
    await this.running;
    this.running = undefined;
  }

  /** Runs every time rule due at `now`; returns the ids of those that ran (tests call this with their clock). */
  async runDue(now: Date): Promise<string[]> {
    const em = this.deps.orm.em.fork();
    const rows = await em.getConnection().execute<
      Array<{
        id: string;
        /** As text: a Date would round away microseconds, and the compare-and-set below must match exactly. */
        due: string;
        title: string;
        account_id: string;
        twin_id: string | null;
        trigger: TimeTrigger;
        commands: RuleCommand[];
        schedule_anchor: string | Date;
        time_zone: string;
        permission_scope_ids: string[] | null;
      }>
    >(
      `SELECT r.id, r.next_run_at::text AS due, r.title, r.account_id, r.twin_id, r.trigger, r.commands, r.schedule_anchor, a.time_zone,
              r.permission_scope_ids
         FROM rules r JOIN accounts a ON a.id = r.account_id
        WHERE r.active AND r.next_run_at <= ? ORDER BY r.next_run_at LIMIT ${BATCH}`,
      [now],
    );
    const fired: string[] = [];
    for (const r of rows) {
      try {
        const next = nextRun(r.trigger.schedule, r.time_zone, now, new Date(r.schedule_anchor));
        // Compare-and-set on the due time read: a node that lost the lease mid-round (and a new leader
        // that already moved the rule on) finds no row and does not fire the same due time again.
        const moved = await em
          .getConnection()
          .execute<{ affectedRows?: number }>(
            'UPDATE rules SET next_run_at = ? WHERE id = ? AND next_run_at = ?::timestamptz',
            [next, r.id, r.due],
            'run',
          );
        if (moved.affectedRows !== 1) continue;
        const run = await this.deps.runner.fire(
          {
            id: r.id,
            title: r.title,
            accountId: r.account_id,
            commands: r.commands,
            permissionScopeIds: r.permission_scope_ids,
          },
          'time',
          r.twin_id,
          now,
        );
        if (run) fired.push(r.id);
      } catch (error) {
        this.deps.log.warn({ err: error, ruleId: r.id }, 'rule scheduler: rule failed');
      }
    }
    return fired;
  }
}
