import type { Messages } from '../../i18n/en';
import { countText } from './count-text';

export type SchemaProblemTexts = Messages['schemaProblems'];

/**
 * One entry of a VALIDATION_ERROR's `details` (docs/api.md): schema failures and most of the
 * server's own checks carry a keyword; the few checks no keyword states send only a message.
 */
export interface SchemaDetail {
  path?: unknown;
  keyword?: unknown;
  params?: unknown;
  message?: unknown;
}

const fill = (text: string, values: Record<string, unknown>) =>
  text.replace(/\{(\w+)\}/g, (match, key: string) => (key in values ? String(values[key]) : match));

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function either(names: string[], t: SchemaProblemTexts): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} ${t.or} ${names.at(-1)!}` : (names[0] ?? '');
}

/** The problem in the console's language, or undefined for a keyword it does not know. */
function keywordText(
  keyword: string,
  params: Record<string, unknown>,
  t: SchemaProblemTexts,
): string | undefined {
  const limit = Number(params.limit);
  switch (keyword) {
    case 'required':
      return t.required;
    case 'minLength':
      return limit === 1 ? t.notEmpty : countText(t.minLength, limit);
    case 'maxLength':
      return countText(t.maxLength, limit);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return fill(t[keyword], { limit: params.limit });
    case 'multipleOf':
      return fill(t.multipleOf, { limit: params.multipleOf });
    case 'type': {
      const types = (Array.isArray(params.type) ? params.type : String(params.type).split(',')) as unknown[];
      return fill(t.type, {
        type: either(
          types.map((type) => t.types[String(type)] ?? String(type)),
          t,
        ),
      });
    }
    case 'format': {
      const format = String(params.format);
      return t.formats[format]
        ? fill(t.format, { format: t.formats[format] })
        : fill(t.otherFormat, { format });
    }
    case 'enum':
      return Array.isArray(params.allowedValues)
        ? fill(t.enum, { values: params.allowedValues.map(shown).join(', ') })
        : undefined;
    case 'const':
      return fill(t.const, { value: shown(params.allowedValue) });
    case 'pattern':
      return fill(t.pattern, { pattern: params.pattern });
    case 'minItems':
      return limit === 1 ? t.notEmpty : countText(t.minItems, limit);
    case 'maxItems':
      return countText(t.maxItems, limit);
    case 'uniqueItems':
      return t.uniqueItems;
    case 'additionalProperties':
      return fill(t.additionalProperties, { property: params.additionalProperty });
    case 'minProperties':
      return limit === 1 ? t.notEmpty : countText(t.minProperties, limit);
    case 'maxProperties':
      return countText(t.maxProperties, limit);
    case 'dependentRequired':
      return fill(t.dependentRequired, {
        property: fieldLabel(`/${String(params.property)}`, t),
        missingProperty: fieldLabel(`/${String(params.missingProperty)}`, t),
      });
    case 'notFound':
      return t.notFound;
    case 'unique':
      return t.unique;
    case 'cron':
      return cronText(params, t);
    default:
      return undefined;
  }
}

/** Why a cron expression cannot run (the server's `cron` keyword, by `params.reason`). */
function cronText(params: Record<string, unknown>, t: SchemaProblemTexts): string | undefined {
  switch (params.reason) {
    case 'fieldCount':
      return countText(t.cron.fieldCount, Number(params.count));
    case 'value':
      return fill(t.cron.value, {
        value: params.value,
        field: t.cron.fields[String(params.field)] ?? String(params.field),
      });
    case 'step':
    case 'never':
    case 'syntax':
      return t.cron[params.reason];
    default:
      return undefined;
  }
}

/**
 * What a detail says is wrong with its field, as a form shows it at the field: "must not be empty".
 * Translated by the schema keyword; a keyword the console does not know, or a detail of the
 * server's own checks, keeps the server's message. Undefined when there is neither.
 */
export function schemaProblem(detail: SchemaDetail, t: SchemaProblemTexts): string | undefined {
  const params = typeof detail.params === 'object' && detail.params !== null ? detail.params : {};
  const translated =
    typeof detail.keyword === 'string'
      ? keywordText(detail.keyword, params as Record<string, unknown>, t)
      : undefined;
  if (translated) return translated;
  return typeof detail.message === 'string' && detail.message ? detail.message : undefined;
}

/** `deviceId`, `device_id` → "Device id"; all-capital words keep their case ("Api URL"). */
function readable(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((word) => (word.length > 1 && word === word.toUpperCase() ? word : word.toLowerCase()));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A field's name from its detail path: the last segment in the console's language where the
 * dictionary names it, else made readable (`/trigger/conditions/0/value`
 * → "Value"); a list entry is the list's name and its number counted from 1 (`/mailTo/1` → "Recipients 2").
 */
export function fieldLabel(path: string, t: SchemaProblemTexts): string {
  const segments = path
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = segments.at(-1);
  if (last === undefined || last === '') return t.request;
  const named = (name: string) => (Object.hasOwn(t.fieldNames, name) ? t.fieldNames[name]! : readable(name));
  if (!/^\d+$/.test(last)) return named(last);
  const list = segments.slice(0, -1).findLast((segment) => !/^\d+$/.test(segment));
  return `${list ? named(list) : t.request} ${Number(last) + 1}`;
}

/**
 * The lines of a VALIDATION_ERROR's schema details: "Title: must not be empty". Only details with a
 * schema keyword count; undefined when there is none (the error's code and message are shown instead).
 */
export function schemaProblemLines(details: readonly unknown[], t: SchemaProblemTexts): string[] | undefined {
  const lines = new Set<string>();
  for (const item of details) {
    if (typeof item !== 'object' || item === null) continue;
    const detail = item as SchemaDetail;
    if (typeof detail.keyword !== 'string') continue;
    const problem = schemaProblem(detail, t);
    if (!problem) continue;
    const path = typeof detail.path === 'string' ? detail.path : '';
    lines.add(fill(t.field, { field: fieldLabel(path, t), problem }));
  }
  return lines.size ? [...lines] : undefined;
}
