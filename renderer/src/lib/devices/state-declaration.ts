/**
 * What the device's driver declares about a state (its target variable: type and unit), and whether
 * the value fits. The device page derives it from the driver it has loaded, so values pushed live
 * get it too; the server's `GET /virtual-devices/{id}/states` answers the same for API clients.
 */

export interface DeclaredVariable {
  key: string;
  type: string;
  unit?: string;
}

export interface StateDeclaration {
  type: string;
  /** Null when the driver names no unit. */
  unit: string | null;
  /** The value does not fit the type (it is shown as received; null fits every type). */
  mismatch: boolean;
}

/** Whether a value fits a driver's value type, as the server's check reads it. */
export function fitsType(value: unknown, type: string): boolean {
  if (value === null || value === undefined) return true;
  switch (type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'object':
      return typeof value === 'object';
    default:
      return true;
  }
}

/** A lookup of the declaration of each state key; undefined for keys the driver does not name. */
export function stateDeclarations(
  variables: readonly DeclaredVariable[],
): (key: string, value: unknown) => StateDeclaration | undefined {
  const byKey = new Map(variables.map((variable) => [variable.key, variable]));
  return (key, value) => {
    const variable = byKey.get(key);
    if (!variable) return undefined;
    return { type: variable.type, unit: variable.unit || null, mismatch: !fitsType(value, variable.type) };
  };
}
