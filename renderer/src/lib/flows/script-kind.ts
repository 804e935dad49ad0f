import type { ScriptKind } from './flow-form';

/** Filters and transformers share their pages; the address says which (`/flows/filters…`). */
export const kindOfPath = (path: string): ScriptKind =>
  path.startsWith('/flows/filters') ? 'filter' : 'transformer';
export const listPath = (kind: ScriptKind): string =>
  kind === 'filter' ? '/flows/filters' : '/flows/transformers';

export const SCRIPT_TEMPLATES: Record<ScriptKind, string> = {
  filter: 'function filter(input, meta) {\n  return true;\n}\n',
  transformer: 'function transform(input, meta) {\n  return input;\n}\n',
};
export const INPUT_TYPES = ['Generic', 'Packet', 'AlarmEntry'] as const;
export type InputType = (typeof INPUT_TYPES)[number];
