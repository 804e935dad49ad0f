import type { CalendarPeriod, TimeAggregateOperation } from '../state-source.js';
import { nextPeriodStart, periodStart, type BasePeriod } from './calendar.js';
import { tidy, toNumber } from './state-values.js';

/**
 * Running figures of a `time-aggregated` state over calendar periods (pure; kept in
 * `data_states.engine.period`). Values arrive in time order; each one is counted, and numbers
 * (booleans 1/0) also enter sum, min, max, first and last. When a value or the clock passes the
 * period's end, the period closes: its result becomes `previous` (what `previous-*` periods show)
 * and its last value the `carry` the next period's `difference` subtracts.
 *
 * Results of an empty period: count 0 and sum 0; mean, min, max and difference null.
 * A value older than the current period's start (late, or replayed after a rollover) is ignored.
 */

export interface PeriodAccumulator {
  start: number;
  end: number;
  /** Values received in the period (of any type). */
  count: number;
  /** Numeric values among them: the divisor of `mean`. */
  n: number;
  sum: number;
  min: number | null;
  max: number | null;
  first: number | null;
  last: number | null;
  /** Last numeric value before this period: what `difference` subtracts. */
  carry: number | null;
  /** The last complete period's result with the state's operation (`previous-*` periods). */
  previous: number | null;
}

export function basePeriod(period: CalendarPeriod): BasePeriod {
  return (period.startsWith('previous-') ? period.slice('previous-'.length) : period) as BasePeriod;
}

export function startAccumulator(
  period: CalendarPeriod,
  at: number,
  timeZone: string,
  carry: number | null = null,
  previous: number | null = null,
): PeriodAccumulator {
  const base = basePeriod(period);
  const start = periodStart(base, at, timeZone);
  return {
    start,
    end: nextPeriodStart(base, start, timeZone),
    count: 0,
    n: 0,
    sum: 0,
    min: null,
    max: null,
    first: null,
    last: null,
    carry,
    previous,
  };
}

/** The accumulator for the period containing `at`: the same one, or the next after closing this one. */
export function rollTo(
  acc: PeriodAccumulator,
  at: number,
  period: CalendarPeriod,
  operation: TimeAggregateOperation,
  timeZone: string,
): PeriodAccumulator {
  if (at < acc.end) return acc;
  const next = startAccumulator(period, at, timeZone, acc.last ?? acc.carry);
  // Whole periods without values passed in between: the last complete one is empty.
  next.previous =
    next.start === acc.end
      ? periodResult(acc, operation)
      : periodResult({ ...next, carry: acc.last ?? acc.carry }, operation);
  return next;
}

/** Counts a value received at `at`; false (nothing changed) when it is older than the period. */
export function addValue(acc: PeriodAccumulator, value: unknown, at: number): boolean {
  if (at < acc.start || at >= acc.end) return false;
  acc.count++;
  const n = toNumber(value);
  if (n === null) return true;
  acc.n++;
  acc.sum += n;
  acc.min = acc.min === null ? n : Math.min(acc.min, n);
  acc.max = acc.max === null ? n : Math.max(acc.max, n);
  acc.first ??= n;
  acc.last = n;
  return true;
}

/** The current period's result. */
export function periodResult(acc: PeriodAccumulator, operation: TimeAggregateOperation): number | null {
  switch (operation) {
    case 'sum':
      return tidy(acc.sum);
    case 'count':
      return acc.count;
    case 'mean':
      return acc.n > 0 ? tidy(acc.sum / acc.n) : null;
    case 'min':
      return acc.min;
    case 'max':
      return acc.max;
    case 'difference':
      return acc.last !== null && acc.carry !== null ? tidy(acc.last - acc.carry) : null;
  }
}

/** What the state shows: the current period's result, or for `previous-*` the last complete period's. */
export function stateResult(
  acc: PeriodAccumulator,
  operation: TimeAggregateOperation,
  period: CalendarPeriod,
): number | null {
  const result = period.startsWith('previous-') ? acc.previous : periodResult(acc, operation);
  // Spec: count returns a number, never null (also before the first complete period).
  return operation === 'count' ? (result ?? 0) : result;
}

const NUMBER_FIELDS = ['start', 'end', 'count', 'n', 'sum'] as const;
const NULLABLE_FIELDS = ['min', 'max', 'first', 'last', 'carry', 'previous'] as const;

/** The accumulator stored in `engine.period`, or null when absent or not one of ours. */
export function readAccumulator(stored: unknown): PeriodAccumulator | null {
  if (!stored || typeof stored !== 'object') return null;
  const s = stored as Record<string, unknown>;
  if (!NUMBER_FIELDS.every((f) => typeof s[f] === 'number')) return null;
  if (!NULLABLE_FIELDS.every((f) => s[f] === null || typeof s[f] === 'number')) return null;
  return { ...(s as unknown as PeriodAccumulator) };
}
