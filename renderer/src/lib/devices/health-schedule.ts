/**
 * A device's health schedule between the XAPI (`{cron}` or `{intervalSeconds}`) and the console's
 * form (keep the current time, an interval in minutes, or a cron expression).
 */
export interface HealthSchedule {
  cron?: string;
  intervalSeconds?: number;
}

export type ScheduleChoice = 'keep' | 'interval' | 'cron';

/** The largest whole unit an interval is a multiple of: 86400 s → 1 day, 5400 s → 90 minutes. */
export function intervalParts(seconds: number): { unit: 'minutes' | 'hours' | 'days'; count: number } {
  if (seconds % 86_400 === 0) return { unit: 'days', count: seconds / 86_400 };
  if (seconds % 3_600 === 0) return { unit: 'hours', count: seconds / 3_600 };
  return { unit: 'minutes', count: Math.max(1, Math.round(seconds / 60)) };
}

/** The form's choice as the PUT body's `schedule` (none: keep); `invalid` for a bad interval. */
export function scheduleOf(
  choice: ScheduleChoice,
  minutes: string,
  cron: string,
): { schedule?: HealthSchedule } | 'invalid' {
  if (choice === 'keep') return {};
  if (choice === 'cron') return { schedule: { cron: cron.trim() } };
  const value = Number(minutes.trim());
  if (!/^\d+$/.test(minutes.trim()) || value < 1) return 'invalid';
  return { schedule: { intervalSeconds: value * 60 } };
}

/** The form's starting point for a stored schedule. */
export function formOf(schedule: HealthSchedule | null | undefined): { minutes: string; cron: string } {
  return {
    minutes: schedule?.intervalSeconds
      ? String(Math.max(1, Math.round(schedule.intervalSeconds / 60)))
      : '15',
    cron: schedule?.cron ?? '',
  };
}
