import type { CommandDraft } from './rule-form';

/** A clear condition's value as the server wants it: a number when it reads as one. */
const clearValueOf = (v: string): string | number | undefined =>
  v.trim() === '' ? undefined : Number.isFinite(Number(v)) ? Number(v) : v;

const scalarText = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

/** The alarm command's severity and clear condition (one condition) from the editor's draft. */
export function alarmSettingsOf(c: CommandDraft): Record<string, unknown> {
  const value = clearValueOf(c.clearValue);
  return {
    ...(c.severity ? { severity: c.severity } : {}),
    ...(c.clearKey.trim()
      ? {
          clear: {
            conditions: [
              {
                stateKey: c.clearKey.trim(),
                operator: c.clearOperator,
                ...(value !== undefined ? { value } : {}),
              },
            ],
          },
        }
      : {}),
  };
}

/** The draft fields of a stored command's clear condition (its first condition; the editor shows one). */
export function clearDraftOf(
  clear: unknown,
): Pick<CommandDraft, 'clearKey' | 'clearOperator' | 'clearValue'> {
  const first = (clear as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions?.[0];
  if (!first) return { clearKey: '', clearOperator: '<', clearValue: '' };
  return {
    clearKey: scalarText(first.stateKey),
    clearOperator: scalarText(first.operator),
    clearValue: scalarText(first.value),
  };
}
