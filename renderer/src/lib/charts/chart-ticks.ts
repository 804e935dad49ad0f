import { offsetOf, wallClockInstant } from './chart-range';

/**
 * Where a chart's axes put their ticks: values at steps of 1, 2 or 5 × 10ⁿ on bounds that are
 * multiples of the step (0, 20, 40 … 140, never 13.7, 27.4 …); times at whole minutes, hours, days,
 * Mondays or first days of a month on the wall clock of the console's zone.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** 1970-01-05, the first Monday of the epoch: weeks start there. */
const FIRST_MONDAY = 4 * DAY;

/** Digits after the point that a multiple of `step` needs (0.25 → 2), so sums print clean. */
const decimalsOf = (step: number) => Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + 1);
const clean = (value: number, step: number) => Number(value.toFixed(decimalsOf(step)));

/** The smallest step of 1, 2 or 5 × 10ⁿ that cuts `span` into at most `maxTicks` parts. */
export function niceStep(span: number, maxTicks: number): number {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const rough = span / Math.max(1, maxTicks);
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const factor of [1, 2, 5, 10]) {
    const step = Number((factor * power).toPrecision(12));
    if (step >= rough * (1 - 1e-9)) return step;
  }
  return 10 * power;
}

export interface ValueTicks {
  min: number;
  max: number;
  interval: number;
}

/** The next larger step of 1, 2 or 5 × 10ⁿ. */
const nextStep = (step: number) => {
  const digit = Math.round(step / 10 ** Math.floor(Math.log10(step) + 1e-9));
  return Number((step * (digit === 2 ? 2.5 : 2)).toPrecision(12));
};
const isMultiple = (value: number, step: number) => Math.abs(value / step - Math.round(value / step)) < 1e-9;

/**
 * A value axis over [low, high] (the data's extent or the state's bounds): the nice step for about
 * `maxTicks` parts, and bounds widened to multiples of it. A flat extent gets room around it.
 * `exact` bounds (a state's y-axis 0–120) are kept when a nice step of up to two parts more
 * divides them (0, 20 … 120), and only widened when none does (0–137 → 0–150).
 */
export function valueTicks(low: number, high: number, maxTicks: number, exact = false): ValueTicks {
  if (exact && high > low) {
    for (
      let step = niceStep(high - low, maxTicks + 2);
      step <= niceStep(high - low, maxTicks);
      step = nextStep(step)
    )
      if (isMultiple(low, step) && isMultiple(high, step)) return { min: low, max: high, interval: step };
  }
  let from = Math.min(low, high);
  let to = Math.max(low, high);
  if (from === to) {
    const room = from === 0 ? 1 : Math.abs(from) / 10;
    from -= room;
    to += room;
  }
  const interval = niceStep(to - from, maxTicks);
  return {
    min: clean(Math.floor(from / interval + 1e-9) * interval, interval),
    max: clean(Math.ceil(to / interval - 1e-9) * interval, interval),
    interval,
  };
}

/**
 * Steps of the time axis, shortest first; months are calendar months. No seconds: a tick's label
 * shows minutes at the finest, so a 30-second step would write every minute twice.
 */
const TIME_STEPS: { ms: number; months?: number }[] = [
  ...[1, 2, 5, 10, 15, 30].map((n) => ({ ms: n * MINUTE })),
  ...[1, 2, 3, 6, 12].map((n) => ({ ms: n * HOUR })),
  { ms: DAY },
  { ms: 2 * DAY },
  { ms: WEEK },
  ...[1, 2, 3, 6, 12].map((months) => ({ ms: months * 30.44 * DAY, months })),
];

/**
 * The ticks of a time axis over [from, to]: the shortest step that gives at most `maxTicks` of them,
 * each on a whole step of the wall clock in `timeZone` (10:15, 10:30; 06:00, 12:00; Mondays; the 1st).
 */
export function timeTicks(from: number, to: number, maxTicks: number, timeZone: string): number[] {
  if (!(to > from)) return [];
  const span = to - from;
  const step = TIME_STEPS.find((candidate) => span / candidate.ms <= maxTicks) ?? TIME_STEPS.at(-1)!;
  const wall = (at: number) => at + offsetOf(at, timeZone);
  const ticks = new Set<number>();
  const add = (local: number) => {
    const at = wallClockInstant(local, timeZone);
    if (at >= from && at <= to) ticks.add(at);
    return at <= to;
  };
  const start = wall(from);
  if (step.months) {
    const date = new Date(start);
    // The first 1st of a month at or after `from` whose month is a multiple of the step (Jan, Apr …).
    let month = date.getUTCFullYear() * 12 + date.getUTCMonth();
    if (Date.UTC(Math.floor(month / 12), month % 12, 1) < start) month += 1;
    month = Math.ceil(month / step.months) * step.months;
    for (; add(Date.UTC(Math.floor(month / 12), month % 12, 1)); month += step.months);
  } else {
    const base = step.ms === WEEK ? FIRST_MONDAY : 0;
    let local = Math.ceil((start - base) / step.ms) * step.ms + base;
    for (; add(local); local += step.ms);
  }
  return [...ticks].sort((a, b) => a - b);
}
