import { describe, expect, it } from 'vitest';
import type { HealthConfig } from '../../drivers/device-driver.entity.js';
import {
  dailySlotMs,
  DAY_MS,
  evaluateHealth,
  healthMode,
  nextDailySlot,
  nextHealthCheck,
  pinnedDailySchedule,
  slotTimeOfDay,
} from './health-evaluation.js';

const now = new Date('2026-03-01T12:00:00Z');
const seen = new Date('2026-03-01T11:59:00Z');
const config: HealthConfig = {
  rules: [
    { state: 'temperature', operator: '>', value: 80, result: 'Unhealthy' },
    { state: 'battery', operator: '<', value: 20, result: 'Warning' },
    { state: '_parsed', operator: 'hasKey', value: 'error', result: 'Error' },
    { state: '_raw', operator: 'contains', value: 'FAULT', result: 'Critical' },
  ],
  silentAfterSeconds: 3600,
};

describe('evaluateHealth', () => {
  it('is Unknown while no packet was received, whatever the rules say', () => {
    expect(evaluateHealth(config, { temperature: 99 }, null, now).state).toBe('Unknown');
    expect(evaluateHealth(null, {}, null, now).state).toBe('Unknown');
  });

  it('gives the result of the first rule that holds, Healthy when none does', () => {
    expect(evaluateHealth(config, { temperature: 20, battery: 80 }, seen, now)).toEqual({
      state: 'Healthy',
      reason: 'no rule matched',
    });
    const hot = evaluateHealth(config, { temperature: 90, battery: 10 }, seen, now);
    expect(hot).toEqual({ state: 'Unhealthy', reason: 'rule 0: temperature > 80' });
    expect(evaluateHealth(config, { temperature: 20, battery: 10 }, seen, now).state).toBe('Warning');
    expect(evaluateHealth(null, {}, seen, now)).toEqual({ state: 'Healthy', reason: 'no health rules' });
  });

  it('reads _parsed and _raw like any other state; a missing or mistyped state does not hold', () => {
    expect(evaluateHealth(config, { _parsed: { error: 3 } }, seen, now).state).toBe('Error');
    expect(evaluateHealth(config, { _raw: 'status=FAULT' }, seen, now).state).toBe('Critical');
    expect(evaluateHealth(config, { temperature: '90' }, seen, now).state).toBe('Healthy');
  });

  it('is Silent when the last packet is older than silentAfterSeconds', () => {
    const old = new Date(now.getTime() - 3601_000);
    expect(evaluateHealth(config, { temperature: 90 }, old, now).state).toBe('Silent');
    expect(evaluateHealth({ rules: [] }, {}, old, now).state).toBe('Healthy');
  });
});

describe('daily slots', () => {
  it('spread 1,000 devices over 24 hours: every hour used, no hour holding more than twice its share', () => {
    const hours = new Array<number>(24).fill(0);
    // Device ids as the server makes them (UUID v7 shape), deterministic so the test is too.
    const ids = Array.from(
      { length: 1000 },
      (_, i) =>
        `0194d2a0-${(i * 7919).toString(16).padStart(4, '0').slice(-4)}-7000-8000-${String(i).padStart(12, '0')}`,
    );
    const slots = ids.map(dailySlotMs);
    for (const slot of slots) {
      expect(slot).toBeGreaterThanOrEqual(0);
      expect(slot).toBeLessThan(DAY_MS);
      hours[Math.floor(slot / 3_600_000)]! += 1;
    }
    // Expected 41.7 per hour (standard deviation 6.3).
    // These ids give 35..52 per hour; midnight-for-all would put 1,000 in hour 0.
    expect(Math.min(...hours)).toBeGreaterThanOrEqual(30);
    expect(Math.max(...hours)).toBeLessThanOrEqual(56);
    // Not midnight for all: at most a handful share any one minute.
    const minutes = new Map<number, number>();
    for (const slot of slots)
      minutes.set(Math.floor(slot / 60_000), (minutes.get(Math.floor(slot / 60_000)) ?? 0) + 1);
    expect(Math.max(...minutes.values())).toBeLessThanOrEqual(5);
  });

  it('are deterministic and come once a day, strictly after the given time', () => {
    const id = 'b3c1f0de-0000-7000-8000-000000000001';
    expect(dailySlotMs(id)).toBe(dailySlotMs(id));
    const first = nextDailySlot(id, now);
    expect(first.getTime()).toBeGreaterThan(now.getTime());
    expect(first.getTime() - now.getTime()).toBeLessThanOrEqual(DAY_MS);
    expect(first.getTime() % DAY_MS).toBe(dailySlotMs(id));
    expect(nextDailySlot(id, first).getTime()).toBe(first.getTime() + DAY_MS);
    expect(nextDailySlot(id, new Date(first.getTime() - 1))).toEqual(first);
    expect(slotTimeOfDay(3_723_000)).toBe('01:02:03');
  });
});

describe('schedules: default and manual', () => {
  const id = 'b3c1f0de-0000-7000-8000-000000000002';
  const base = { deviceId: id, anchor: null, timeZone: 'UTC' };

  it('default rules run in the slot; own rules or an own schedule make the health manual', () => {
    expect(healthMode({ ownConfig: null, schedule: null })).toBe('default');
    expect(healthMode({ ownConfig: config, schedule: null })).toBe('manual');
    expect(nextHealthCheck({ ...base, ownConfig: null, schedule: null }, now)).toEqual(
      nextDailySlot(id, now),
    );
  });

  it('manual rules keep their own schedule (interval from its anchor, cron in the time zone)', () => {
    const anchor = new Date('2026-03-01T11:00:00Z');
    const every15 = { ...base, ownConfig: config, schedule: { intervalSeconds: 900 }, anchor };
    expect(nextHealthCheck(every15, now)).toEqual(new Date('2026-03-01T12:15:00Z'));
    const cron = { ...base, ownConfig: config, schedule: { cron: '30 6 * * *' }, timeZone: 'Europe/Berlin' };
    expect(nextHealthCheck(cron, now)).toEqual(new Date('2026-03-02T05:30:00Z'));
  });

  it('an edited default without a schedule keeps the daily time it had', () => {
    const { schedule, anchor } = pinnedDailySchedule(id, now);
    const pinned = { ...base, ownConfig: config, schedule, anchor };
    expect(nextHealthCheck(pinned, now)).toEqual(nextDailySlot(id, now));
    const later = new Date(now.getTime() + 5 * DAY_MS);
    expect(nextHealthCheck(pinned, later)).toEqual(nextDailySlot(id, later));
  });
});
