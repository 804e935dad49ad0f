/** The condition vocabulary of rules: the operators per value type and their value inputs. */

const ANY = ['exists', 'missing'];
/** The operators the server accepts per state value type (the health-rule vocabulary). */
export const OPERATORS_BY_TYPE: Record<'number' | 'boolean' | 'string' | 'object', string[]> = {
  number: ['<', '<=', '>', '>=', '==', '!=', 'between', ...ANY],
  boolean: ['==', '!=', 'isTrue', 'isFalse', ...ANY],
  string: ['==', '!=', 'contains', 'matches', ...ANY],
  object: ['hasKey', ...ANY],
};
export const ALL_OPERATORS = [...new Set(Object.values(OPERATORS_BY_TYPE).flat())];

export function operatorsFor(valueType: string | undefined): string[] {
  if (valueType === 'integer') return OPERATORS_BY_TYPE.number;
  return valueType && valueType in OPERATORS_BY_TYPE
    ? OPERATORS_BY_TYPE[valueType as keyof typeof OPERATORS_BY_TYPE]
    : ALL_OPERATORS;
}

/** What the value input of an operator looks like. */
export function valueInput(operator: string): 'none' | 'range' | 'number' | 'text' {
  if (['exists', 'missing', 'isTrue', 'isFalse'].includes(operator)) return 'none';
  if (operator === 'between') return 'range';
  if (['<', '<=', '>', '>='].includes(operator)) return 'number';
  return 'text';
}
