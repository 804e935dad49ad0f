import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import { problem, type CronField, type CronParams, type ProblemDetail } from './http/problem-detail.js';

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

/**
 * Why a schedule cannot be used, as a detail at `path` (the schedule object), or undefined when it
 * can: none or several of at, cron, intervalSeconds (`minProperties`/`maxProperties`), an `at` that
 * is no date-time, an interval below the minimum, a cron expression that cannot run (`cron`).
 */
export function scheduleDetail(
  path: string,
  schedule: Schedule,
  timeZone = 'UTC',
): ProblemDetail | undefined {
  const given = [schedule.at, schedule.cron, schedule.intervalSeconds].filter((v) => v !== undefined);
  const exactlyOne = 'give exactly one of at, cron, intervalSeconds';
  if (given.length === 0) return problem(path, 'minProperties', { limit: 1 }, exactlyOne);
  if (given.length > 1) return problem(path, 'maxProperties', { limit: 1 }, exactlyOne);
  if (schedule.at !== undefined && Number.isNaN(Date.parse(schedule.at)))
    return problem(path, 'format', { format: 'date-time' }, 'at must be an ISO date-time');
  if (schedule.intervalSeconds !== undefined) {
    const s = schedule.intervalSeconds;
    if (!Number.isFinite(s) || s < MIN_INTERVAL_SECONDS)
      return problem(
        path,
        'minimum',
        { limit: MIN_INTERVAL_SECONDS },
        `intervalSeconds must be >= ${MIN_INTERVAL_SECONDS}`,
      );
  }
  if (schedule.cron !== undefined) {
    const found = cronIssue(schedule.cron, timeZone);
    if (found) return problem(path, 'cron', found.params, found.message);
  }
  return undefined;
}

/** Why a schedule cannot be used, or undefined when it can. */
export function scheduleProblem(schedule: Schedule, timeZone = 'UTC'): string | undefined {
  return scheduleDetail('', schedule, timeZone)?.message;
}

/** The fields of a 5-field expression; a 6-field one has seconds first. */
const FIVE_FIELDS: CronField[] = ['minute', 'hour', 'day', 'month', 'dayOfWeek'];
const CRON_FIELDS: Record<CronField, string> = {
  second: 'second (0–59)',
  minute: 'minute (0–59)',
  hour: 'hour (0–23)',
  day: 'day of month (1–31)',
  month: 'month (1–12 or JAN–DEC)',
  dayOfWeek: 'day of week (0–7 or SUN–SAT, 0 and 7 are Sunday)',
};

/**
 * Why a cron expression cannot be used, in the user's terms (the library's messages name its own
 * internals): the field count, the field and range of a bad value, and an expression that names
 * no real date ("0 0 31 2 *") and so would never run.
 */
export function cronProblem(cron: string, timeZone = 'UTC'): string | undefined {
  return cronIssue(cron, timeZone)?.message;
}

/** cronProblem's reason as the `cron` keyword's params, with its English message. */
function cronIssue(cron: string, timeZone: string): { params: CronParams; message: string } | undefined {
  const fields = cron.trim().split(/\s+/).filter(Boolean);
  if (fields.length < 5 || fields.length > 6)
    return {
      params: { reason: 'fieldCount', count: fields.length },
      message: `cron: "${cron}" has ${fields.length} field${fields.length === 1 ? '' : 's'}; give 5 (minute hour day-of-month month day-of-week, e.g. "0 6 * * 1" for Mondays at 06:00) or 6 with seconds first`,
    };
  let parsed: Cron;
  try {
    parsed = new Cron(cron, { timezone: timeZone, paused: true });
  } catch (error) {
    const message = (error as Error).message.replace(/^CronPattern:\s*/, '');
    // The library reports values shifted to its own base (a day "0" as "-1"): quote the user's field.
    const names: CronField[] = fields.length === 6 ? ['second', ...FIVE_FIELDS] : FIVE_FIELDS;
    const badValue = (field: CronField, value: string) => ({
      params: { reason: 'value' as const, value, field },
      message: `cron: "${value}" is not a valid ${CRON_FIELDS[field]}`,
    });
    const field = /^Invalid value for (\w+):/.exec(message)?.[1] as CronField | undefined;
    if (field && names.includes(field)) return badValue(field, fields[names.indexOf(field)]!);
    const illegal = /\((.*)\) contains illegal characters/.exec(message)?.[1];
    const at = illegal === undefined ? -1 : fields.indexOf(illegal);
    if (at >= 0) return badValue(names[at]!, illegal!);
    if (/illegal stepping/i.test(message))
      return { params: { reason: 'step' }, message: `cron: a step (/n) must be 1 or more in "${cron}"` };
    return {
      params: { reason: 'syntax' },
      message: `cron: "${cron}" is not a valid expression (${message})`,
    };
  }
  if (!parsed.nextRun())
    return {
      params: { reason: 'never' },
      message: `cron: "${cron}" names no date that ever comes, so it would never run`,
    };
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
