/**
 * A connector kind's settings form, derived from the kind's settings schema as the server serves it
 * (`GET /xapi/v1/connector-kinds`, docs/adr/0074-connector-kind-descriptors.md). Pure, so the
 * conversions are unit-tested without a browser; the component only renders the fields.
 */

import { schemaProblem, type SchemaProblemTexts } from '../format/schema-problem';
import { fieldOverride, shown, type FieldOverride } from './field-overrides';

export const SECRET_MASK = '********';

interface JsonSchema {
  type?: string;
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  patternProperties?: Record<string, JsonSchema>;
  required?: string[];
  writeOnly?: boolean;
  title?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

/**
 * How a setting is edited: `secret` keeps its value while the mask stays; `list` one item a line; `map`
 * "name: value" lines; `json` a list of objects (a Modbus register map) as JSON text.
 */
export type FieldKind =
  'text' | 'long-text' | 'secret' | 'integer' | 'choice' | 'flag' | 'list' | 'map' | 'json';

export interface SettingsField extends FieldOverride {
  key: string;
  kind: FieldKind;
  required: boolean;
  choices: Array<string | number>;
  minimum?: number;
  maximum?: number;
  title?: string;
  description?: string;
}

/** Texts this long (PEM certificates and keys, 20 000) get a text area; URLs (2000) do not. */
const LONG_TEXT = 10_000;

function kindOf(schema: JsonSchema): FieldKind {
  if (schema.writeOnly) return 'secret';
  if (schema.anyOf?.every((branch) => 'const' in branch)) return 'choice';
  if (schema.type === 'integer' || schema.type === 'number') return 'integer';
  if (schema.type === 'boolean') return 'flag';
  if (schema.type === 'array') return schema.items?.type === 'object' ? 'json' : 'list';
  if (schema.type === 'object') return 'map';
  return (schema.maxLength ?? 0) >= LONG_TEXT ? 'long-text' : 'text';
}

/** The fields of a settings schema, in its order, with `kind`'s overrides (lib/connectors/field-overrides.ts). */
export function settingsFields(schema: JsonSchema, kind = ''): SettingsField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([key, property]) => ({
    ...fieldOverride(kind, key),
    key,
    kind: kindOf(property),
    required: required.has(key),
    choices: (property.anyOf ?? []).filter((b) => 'const' in b).map((b) => b.const as string | number),
    ...(property.minimum !== undefined ? { minimum: property.minimum } : {}),
    ...(property.maximum !== undefined ? { maximum: property.maximum } : {}),
    ...(property.title ? { title: property.title } : {}),
    ...(property.description ? { description: property.description } : {}),
  }));
}

/** Text per setting (a number input may leave a number), a flag's check. */
export type SettingsDraft = Record<string, string | number | boolean>;

/** A setting's text; anything but a scalar (never sent by the server for such fields) is shown as JSON. */
const scalar = (value: unknown): string =>
  value === undefined || value === null
    ? ''
    : typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : JSON.stringify(value);

/**
 * The form's values from the settings as read; secrets start empty (the server never sends them
 * back). A new connector (no `config`) starts from the fields' defaults; a flag's default is its
 * value while unset.
 */
export function settingsDraft(fields: SettingsField[], config?: Record<string, unknown>): SettingsDraft {
  const draft: SettingsDraft = {};
  for (const field of fields) {
    const value = config ? config[field.key] : field.default;
    if (field.kind === 'secret') draft[field.key] = '';
    else if (field.kind === 'flag')
      draft[field.key] = typeof value === 'boolean' ? value : field.default === true;
    else if (field.kind === 'json')
      draft[field.key] = value === undefined ? '' : JSON.stringify(value, null, 2);
    else if (field.kind === 'list') draft[field.key] = Array.isArray(value) ? value.join('\n') : '';
    else if (field.kind === 'map')
      draft[field.key] =
        value && typeof value === 'object'
          ? Object.entries(value as Record<string, unknown>)
              .map(([name, text]) => `${name}: ${scalar(text)}`)
              .join('\n')
          : '';
    else draft[field.key] = scalar(value);
  }
  return draft;
}

const lines = (text: string, commas = false) =>
  text
    .split(commas ? /[\n,;]+/ : '\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** The fields shown for the values in `draft` (their `showWhen` holds). */
export function visibleFields(fields: SettingsField[], draft: SettingsDraft): SettingsField[] {
  const byKey = new Map(fields.map((field) => [field.key, field]));
  return fields.filter((field) => shown(field, byKey, draft));
}

/**
 * The settings to send. Empty optional fields are left out; an empty secret input keeps a stored
 * secret (the mask goes back, as SecretField tells the user). Numbers that do not parse are sent
 * as text, so the server names the field. Fields hidden by a condition are left out, and a stored
 * secret of one is removed (`null`; absent would keep it). A flag at its default is sent only when
 * it was stored.
 */
export function settingsConfig(
  fields: SettingsField[],
  draft: SettingsDraft,
  previous: Record<string, unknown> = {},
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const visible = new Set(visibleFields(fields, draft).map((field) => field.key));
  for (const field of fields) {
    const value = draft[field.key];
    if (!visible.has(field.key)) {
      if (field.kind === 'secret' && previous[field.key] !== undefined) config[field.key] = null;
      continue;
    }
    if (field.kind === 'flag') {
      if (value !== (field.default === true) || previous[field.key] !== undefined)
        config[field.key] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
    if (field.kind === 'secret') {
      if (text) config[field.key] = text;
      else if (previous[field.key] !== undefined) config[field.key] = SECRET_MASK;
      continue;
    }
    if (!text) continue;
    if (field.kind === 'json') config[field.key] = parsedOr(text);
    else if (field.kind === 'list') config[field.key] = lines(text, field.commas);
    else if (field.kind === 'map')
      config[field.key] = Object.fromEntries(
        lines(text).map((line) => {
          const at = line.indexOf(':');
          return at < 0 ? [line, ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
        }),
      );
    else if (field.kind === 'integer') config[field.key] = /^-?\d+$/.test(text) ? Number(text) : text;
    else if (field.kind === 'choice')
      config[field.key] = field.choices.find((choice) => String(choice) === text) ?? text;
    else config[field.key] = text;
  }
  return config;
}

/** JSON text as its value; text that does not parse is sent as it is, so the server names the field. */
function parsedOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The setting a problem of the server names (`/config/url`, `config/headers/X-Key`) → `url`, `headers`. */
export function problemField(path: string): string {
  return path.replace(/^\/?(config\/)?/, '').split('/')[0] ?? '';
}

/**
 * A refusal's `details` by setting (`url` → "must be an http:// or https:// URL"): worded in the
 * console's language from the keyword (`t`: `i18n.t.schemaProblems`), else the server's message.
 */
export function settingsProblems(details: readonly unknown[], t: SchemaProblemTexts): Map<string, string> {
  const found = new Map<string, string>();
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null) continue;
    const { path } = detail as { path?: unknown };
    const problem = schemaProblem(detail, t);
    if (typeof path === 'string' && path && problem) found.set(problemField(path), problem);
  }
  return found;
}
