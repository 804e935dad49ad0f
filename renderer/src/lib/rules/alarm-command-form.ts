import type { CommandDraft } from './rule-form';

/** A clear condition's value as the server wants it: a number when it reads as one. */
const clearValueOf = (v: string): string | number | undefined =>
  v.trim() === '' ? undefined : Number.isFinite(Number(v)) ? Number(v) : v;

const scalarText = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

/** The alarm command's severity and clear condition from the editor's draft (the first condition edited, the rest kept). */
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
              ...c.clearRest.conditions,
            ],
            ...(c.clearRest.match ? { match: c.clearRest.match } : {}),
          },
        }
      : {}),
  };
}

/** The draft fields of a stored command's clear condition: the editor shows the first, keeps the rest. */
export function clearDraftOf(
  clear: unknown,
): Pick<CommandDraft, 'clearKey' | 'clearOperator' | 'clearValue' | 'clearRest'> {
  const stored = clear as { conditions?: Array<Record<string, unknown>>; match?: string } | undefined;
  const [first, ...rest] = stored?.conditions ?? [];
  if (!first) return { clearKey: '', clearOperator: '<', clearValue: '', clearRest: { conditions: [] } };
  return {
    clearKey: scalarText(first.stateKey),
    clearOperator: scalarText(first.operator),
    clearValue: scalarText(first.value),
    clearRest: { conditions: rest, ...(stored?.match ? { match: stored.match } : {}) },
  };
}
