import { describe, expect, it } from 'vitest';
import { formOf, intervalParts, scheduleOf } from './health-schedule';

describe('device health schedule in the console', () => {
  it('names an interval in its largest whole unit', () => {
    expect(intervalParts(86_400)).toEqual({ unit: 'days', count: 1 });
    expect(intervalParts(7_200)).toEqual({ unit: 'hours', count: 2 });
    expect(intervalParts(5_400)).toEqual({ unit: 'minutes', count: 90 });
    expect(intervalParts(300)).toEqual({ unit: 'minutes', count: 5 });
  });

  it('turns the form into the PUT body: keep sends none, minutes become seconds, cron is trimmed', () => {
    expect(scheduleOf('keep', 'x', '')).toEqual({});
    expect(scheduleOf('interval', ' 5 ', '')).toEqual({ schedule: { intervalSeconds: 300 } });
    expect(scheduleOf('cron', '', ' */15 * * * * ')).toEqual({ schedule: { cron: '*/15 * * * *' } });
    for (const bad of ['', '0', '-3', '1.5', 'ten']) expect(scheduleOf('interval', bad, '')).toBe('invalid');
  });

  it('starts the form from the stored schedule', () => {
    expect(formOf(null)).toEqual({ minutes: '15', cron: '' });
    expect(formOf({ intervalSeconds: 3_600 })).toEqual({ minutes: '60', cron: '' });
    expect(formOf({ cron: '0 6 * * *' })).toEqual({ minutes: '15', cron: '0 6 * * *' });
  });
});
