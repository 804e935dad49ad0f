import { describe, expect, it } from 'vitest';
import { nextRun, scheduleProblem, spreadOffsetMs } from './schedule.js';

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
