import { createHash } from 'node:crypto';
import { Cron } from 'croner';

/**
 * When something scheduled runs next (time rules, alarm reports). A schedule is one of:
 * - `at`: one instant (ISO-8601); runs once, then never again;
 * - `cron`: a cron expression (5 or 6 fields, seconds first when 6) read in `timeZone`;
 * - `intervalSeconds`: every that many seconds, counted from `anchor` (so a server restart or a
 *   late round does not shift the grid: runs missed meanwhile collapse into one).
 */
export interface Schedule {
  at?: string;
  cron?: string;
  intervalSeconds?: number;
}

export const MIN_INTERVAL_SECONDS = 1;

/** Why a schedule cannot be used, or undefined when it can. */
export function scheduleProblem(schedule: Schedule, timeZone = 'UTC'): string | undefined {
  const given = [schedule.at, schedule.cron, schedule.intervalSeconds].filter((v) => v !== undefined);
  if (given.length !== 1) return 'give exactly one of at, cron, intervalSeconds';
  if (schedule.at !== undefined && Number.isNaN(Date.parse(schedule.at)))
    return 'at must be an ISO date-time';
  if (schedule.intervalSeconds !== undefined) {
    const s = schedule.intervalSeconds;
    if (!Number.isFinite(s) || s < MIN_INTERVAL_SECONDS)
      return `intervalSeconds must be >= ${MIN_INTERVAL_SECONDS}`;
  }
  if (schedule.cron !== undefined) {
    try {
      new Cron(schedule.cron, { timezone: timeZone, paused: true });
    } catch (error) {
      return `cron: ${(error as Error).message}`;
    }
  }
  return undefined;
}

/**
 * The first run strictly after `after`, or null when there is none (an `at` in the past).
 * `anchor` places the interval grid (the rule's creation or last edit).
 */
export function nextRun(schedule: Schedule, timeZone: string, after: Date, anchor: Date): Date | null {
  if (schedule.at !== undefined) {
    const at = new Date(schedule.at);
    return at.getTime() > after.getTime() ? at : null;
  }
  if (schedule.intervalSeconds !== undefined) {
    const step = Math.max(MIN_INTERVAL_SECONDS, schedule.intervalSeconds) * 1000;
    const since = after.getTime() - anchor.getTime();
    const steps = since < 0 ? 0 : Math.floor(since / step) + 1;
    return new Date(anchor.getTime() + steps * step);
  }
  if (schedule.cron !== undefined) {
    return new Cron(schedule.cron, { timezone: timeZone, paused: true }).nextRun(after) ?? null;
  }
  return null;
}

/**
 * A deterministic offset in [0, periodMs) for an id (from its SHA-256): spreads work of many
 * objects evenly over a period, and each object keeps its slot across restarts and nodes.
 */
export function spreadOffsetMs(id: string, periodMs: number): number {
  const fraction = createHash('sha256').update(id).digest().readUIntBE(0, 6) / 2 ** 48;
  return Math.floor(fraction * periodMs);
}
