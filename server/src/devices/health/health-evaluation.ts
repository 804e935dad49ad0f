import type { HealthConfig, HealthRule } from '../../drivers/device-driver.entity.js';
import { conditionHolds } from '../../rules/conditions.js';
import { nextRun, spreadOffsetMs, type Schedule } from '../../platform/schedule.js';
import { HEALTH_UNKNOWN } from '../virtual-device.entity.js';

/**
 * Device health, pure (docs/device-health.md):
 * - no packet received yet: `Unknown`, whatever the rules say (spec, States and transitions);
 * - `silentAfterSeconds` set and the last packet older than that: `Silent`;
 * - else the first rule (in order) whose condition holds on the device's current states gives
 *   its `result`; no rule holds (or there are none): `Healthy`.
 * Conditions use the rules' operator vocabulary (server/src/rules/conditions.ts), so a health rule
 * and an event rule judge a value alike.
 */

export const HEALTH_HEALTHY = 'Healthy';
export const HEALTH_SILENT = 'Silent';
export const DAY_MS = 24 * 3600 * 1000;

export interface HealthVerdict {
  state: string;
  /** Why, in a line: the rule that matched, silence, no packet, or no rule matched. */
  reason: string;
}

export const describeRule = (rule: HealthRule, index: number): string =>
  `rule ${index}: ${rule.state} ${rule.operator}${rule.value === undefined ? '' : ` ${JSON.stringify(rule.value)}`}`;

export function evaluateHealth(
  config: HealthConfig | null,
  states: Readonly<Record<string, unknown>>,
  lastSeen: Date | null,
  now: Date,
): HealthVerdict {
  if (!lastSeen) return { state: HEALTH_UNKNOWN, reason: 'no packet received' };
  const silentAfter = config?.silentAfterSeconds;
  if (silentAfter && now.getTime() - lastSeen.getTime() > silentAfter * 1000) {
    return { state: HEALTH_SILENT, reason: `no packet for more than ${silentAfter} s` };
  }
  const rules = config?.rules ?? [];
  for (const [index, rule] of rules.entries()) {
    const holds = conditionHolds(
      { stateKey: rule.state, operator: rule.operator, value: rule.value },
      states[rule.state],
    );
    if (holds) return { state: rule.result, reason: describeRule(rule, index) };
  }
  return { state: HEALTH_HEALTHY, reason: rules.length ? 'no rule matched' : 'no health rules' };
}

/** The state keys the rules read (what to load from `device_states`). */
export const ruleStateKeys = (config: HealthConfig | null): string[] => [
  ...new Set((config?.rules ?? []).map((r) => r.state)),
];

/** The device's fixed time of day (ms after 00:00 UTC) for its default health rules. */
export const dailySlotMs = (deviceId: string): number => spreadOffsetMs(deviceId, DAY_MS);

/** `HH:MM:SS` (UTC) of a daily slot, for replies and docs. */
export function slotTimeOfDay(slotMs: number): string {
  const s = Math.floor(slotMs / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/** The first instant of the device's daily slot strictly after `after`. */
export function nextDailySlot(deviceId: string, after: Date): Date {
  const dayStart = Math.floor(after.getTime() / DAY_MS) * DAY_MS;
  const candidate = dayStart + dailySlotMs(deviceId);
  return new Date(candidate > after.getTime() ? candidate : candidate + DAY_MS);
}

/** A manual schedule with no explicit one keeps the daily time it had: every 24 h from its slot. */
export function pinnedDailySchedule(deviceId: string, now: Date): { schedule: Schedule; anchor: Date } {
  return { schedule: { intervalSeconds: DAY_MS / 1000 }, anchor: nextDailySlot(deviceId, now) };
}

export type HealthMode = 'default' | 'manual';

/** What decides when a device's health is evaluated next. */
export interface HealthTiming {
  deviceId: string;
  /** The device's own rules (manual); null: the driver's (default). */
  ownConfig: HealthConfig | null;
  schedule: Schedule | null;
  anchor: Date | null;
  timeZone: string;
}

/** Own rules or an explicit schedule make a device's health manual (it keeps its schedule). */
export const healthMode = (t: Pick<HealthTiming, 'ownConfig' | 'schedule'>): HealthMode =>
  t.ownConfig !== null || t.schedule !== null ? 'manual' : 'default';

/**
 * When the health is evaluated next after `after`: default rules in the device's daily slot;
 * manual ones on their own schedule (cron in the account's time zone, or an interval from its
 * anchor), or their daily slot when they were never given one.
 */
export function nextHealthCheck(t: HealthTiming, after: Date): Date {
  if (healthMode(t) === 'manual' && t.schedule) {
    const next = nextRun(t.schedule, t.timeZone, after, t.anchor ?? after);
    if (next) return next;
  }
  return nextDailySlot(t.deviceId, after);
}
