import type { TargetVariable, ValueType } from '../drivers/device-driver.entity.js';
import { valueWarning } from '../states/engine/state-values.js';

/** What a device's driver declares about one of its states, and whether the current value fits. */
export interface DeclaredState {
  /** The driver's type for the key; null for keys it does not declare (`_raw`, `_parsed`, `_meta.*`, …). */
  valueType: ValueType | null;
  unit: string | null;
  /** Set when the value does not fit `valueType`; the value itself is kept as received. */
  warning: string | null;
}

const UNDECLARED: DeclaredState = { valueType: null, unit: null, warning: null };

/**
 * The driver's declaration of each state key, looked up when states are read instead of stored with
 * each value: ingest writes states as before (no per-packet cost), and an edited driver applies at
 * once to the values already stored. The warning is the one twin states carry for the same mismatch.
 */
export function stateDeclarations(
  targetVariables: readonly TargetVariable[],
): (key: string, value: unknown) => DeclaredState {
  const byKey = new Map(targetVariables.map((variable) => [variable.key, variable]));
  return (key, value) => {
    const variable = byKey.get(key);
    if (!variable) return UNDECLARED;
    return {
      valueType: variable.type,
      unit: variable.unit || null,
      warning: valueWarning(value, variable.type),
    };
  };
}
