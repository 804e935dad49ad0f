import { describe, expect, it } from 'vitest';
import { cronProblem, nextRun, scheduleDetail, scheduleProblem, spreadOffsetMs } from './schedule.js';

describe('schedule', () => {
  const anchor = new Date('2026-03-01T10:00:00Z');
  it('intervals keep the grid from their anchor, missed runs collapse', () => {
    expect(nextRun({ intervalSeconds: 60 }, 'UTC', anchor, anchor)).toEqual(new Date('2026-03-01T10:01:00Z'));
    expect(nextRun({ intervalSeconds: 60 }, 'UTC', new Date('2026-03-01T10:05:30Z'), anchor)).toEqual(
      new Date('2026-03-01T10:06:00Z'),
    );
  });
  it('cron expressions are read in the time zone; a past time point has no next run', () => {
    expect(nextRun({ cron: '0 7 * * *' }, 'Europe/Berlin', anchor, anchor)).toEqual(
      new Date('2026-03-02T06:00:00Z'),
    );
    expect(nextRun({ at: '2026-03-01T09:00:00Z' }, 'UTC', anchor, anchor)).toBeNull();
    expect(nextRun({ at: '2026-03-01T11:00:00Z' }, 'UTC', anchor, anchor)).toEqual(
      new Date('2026-03-01T11:00:00Z'),
    );
  });
  it('refuses broken schedules', () => {
    expect(scheduleProblem({ cron: 'nope' })).toMatch(/cron/);
    expect(scheduleProblem({})).toMatch(/exactly one/);
    expect(scheduleProblem({ at: 'x' })).toMatch(/ISO/);
    expect(scheduleProblem({ intervalSeconds: 0 })).toMatch(/>=/);
  });
  it('spreads ids evenly and deterministically over a period', () => {
    const day = 86_400_000;
    const offsets = Array.from({ length: 2400 }, (_, i) => spreadOffsetMs(`device-${i}`, day));
    expect(spreadOffsetMs('device-1', day)).toBe(offsets[1]);
    const perHour = new Array<number>(24).fill(0);
    for (const o of offsets) perHour[Math.floor(o / 3_600_000)]!++;
    expect(Math.min(...perHour)).toBeGreaterThan(60);
    expect(Math.max(...perHour)).toBeLessThan(140);
  });
});

describe('cron problems', () => {
  it('name the field count, the field and range of a bad value as written, and a date that never comes', () => {
    expect(cronProblem('every other tuesday')).toMatch(/has 3 fields; give 5 \(minute hour/);
    expect(cronProblem('* * * * * * *')).toMatch(/has 7 fields/);
    expect(cronProblem('61 * * * *')).toBe('cron: "61" is not a valid minute (0–59)');
    expect(cronProblem('0 25 * * *')).toBe('cron: "25" is not a valid hour (0–23)');
    expect(cronProblem('0 0 0 1 *')).toBe('cron: "0" is not a valid day of month (1–31)');
    expect(cronProblem('0 0 1 13 *')).toBe('cron: "13" is not a valid month (1–12 or JAN–DEC)');
    expect(cronProblem('0 7 * * 8')).toMatch(/^cron: "8" is not a valid day of week/);
    expect(cronProblem('x 0 7 * * *')).toBe('cron: "x" is not a valid second (0–59)');
    expect(cronProblem('*/0 * * * *')).toMatch(/a step \(\/n\) must be 1 or more/);
    expect(cronProblem('0 0 31 2 *')).toMatch(/names no date that ever comes/);
    expect(cronProblem('0 7 * * MON-FRI', 'Europe/Berlin')).toBeUndefined();
    expect(cronProblem('30 0 6 * * 1')).toBeUndefined();
    expect(scheduleProblem({ cron: '0 0 31 2 *' })).toMatch(/never run/);
  });
});

describe('schedule details', () => {
  const at = '/trigger/schedule';
  const keyOf = (schedule: Parameters<typeof scheduleDetail>[1]) => {
    const detail = scheduleDetail(at, schedule);
    return detail && [detail.keyword, detail.params];
  };

  it('say with a keyword what is wrong, at the schedule’s path, keeping the English message', () => {
    expect(scheduleDetail(at, {})).toEqual({
      path: at,
      keyword: 'minProperties',
      params: { limit: 1 },
      message: 'give exactly one of at, cron, intervalSeconds',
    });
    expect(keyOf({ cron: '* * * * *', intervalSeconds: 60 })).toEqual(['maxProperties', { limit: 1 }]);
    expect(keyOf({ at: 'x' })).toEqual(['format', { format: 'date-time' }]);
    expect(keyOf({ intervalSeconds: 0 })).toEqual(['minimum', { comparison: '>=', limit: 1 }]);
    expect(keyOf({ intervalSeconds: 60 })).toBeUndefined();
  });

  it('give a cron expression’s reason and the value and field it concerns', () => {
    expect(keyOf({ cron: 'every other tuesday' })).toEqual(['cron', { reason: 'fieldCount', count: 3 }]);
    expect(keyOf({ cron: '61 * * * *' })).toEqual([
      'cron',
      { reason: 'value', value: '61', field: 'minute' },
    ]);
    expect(keyOf({ cron: 'x 0 7 * * *' })).toEqual([
      'cron',
      { reason: 'value', value: 'x', field: 'second' },
    ]);
    expect(keyOf({ cron: '*/0 * * * *' })).toEqual(['cron', { reason: 'step' }]);
    expect(keyOf({ cron: '0 0 31 2 *' })).toEqual(['cron', { reason: 'never' }]);
    expect(scheduleDetail(at, { cron: '0 25 * * *' })?.message).toBe('cron: "25" is not a valid hour (0–23)');
  });
});
