import type { AggregateOperation } from '../state-source.js';
import { tidy, toNumber } from './state-values.js';

/**
 * `aggregate` sources (pure). Over the current values of the source states: sum, mean, min and max
 * of those that are numbers (booleans 1/0), null when none is; count of those that have a value
 * (0, never null). `difference` reads one state: its last received value minus the one before,
 * from the two most recent values kept in `data_states.engine.recent`.
 */

export function aggregateOf(
  operation: Exclude<AggregateOperation, 'difference'>,
  values: unknown[],
): number | null {
  if (operation === 'count') return values.filter((v) => v !== null && v !== undefined).length;
  const numbers: number[] = [];
  for (const v of values) {
    const n = toNumber(v);
    if (n !== null) numbers.push(n);
  }
  if (numbers.length === 0) return null;
  switch (operation) {
    case 'sum':
      return tidy(numbers.reduce((a, b) => a + b, 0));
    case 'mean':
      return tidy(numbers.reduce((a, b) => a + b, 0) / numbers.length);
    case 'min':
      return Math.min(...numbers);
    case 'max':
      return Math.max(...numbers);
  }
}

/** The two most recent numeric values, oldest first, after receiving `value`. */
export function pushRecent(recent: unknown, value: unknown): number[] {
  const n = toNumber(value);
  const kept = Array.isArray(recent) ? recent.filter((v): v is number => typeof v === 'number') : [];
  if (n === null) return kept.slice(-2);
  return [...kept, n].slice(-2);
}

export function differenceOf(recent: number[]): number | null {
  return recent.length === 2 ? tidy(recent[1]! - recent[0]!) : null;
}
