import { alarmLink } from '../alarms/alarm-link.js';

/**
 * Placeholders in rule command texts (docs/rules.md). Grammar:
 *
 *   placeholder := "{{" space* name space* "}}"
 *   name        := "twin.title" | "twin.id" | "twin.hierarchy" | "twinlink"
 *                | "twin.properties." key        custom key-value pair of the twin
 *                | "states." key                 current value of the twin's data state
 *                | "rule.title" | "rule.id" | "trigger" | "time"
 *                | "alarm.id" | "alarm.severity" | "alarm.count" | "alarmlink"
 *                                                 the alarm an earlier command of the run raised
 *   key         := one or more characters other than "{", "}" and white space
 *
 * Values: text as is, numbers and booleans in JSON notation, objects and arrays as JSON, and
 * anything unknown or absent (no twin, no such state) as the empty text. Text outside
 * placeholders, and `{{…}}` that does not match the grammar, is kept unchanged.
 */

export interface PlaceholderContext {
  twin: {
    id: string;
    title: string;
    /** Titles from the root twin down to this one. */
    hierarchy: string[];
    properties: Record<string, unknown>;
    states: Record<string, unknown>;
  } | null;
  rule: { id: string; title: string };
  /** `event`, `time`, `enter`, `leave`. */
  trigger: string;
  time: Date;
  /** The console's public URL (`STELLWERK_PUBLIC_URL`). */
  publicUrl: string;
  /** The alarm entry an `alarm` command of this run wrote or counted again, once it ran. */
  alarm?: { id: string; severity: string; occurrenceCount: number } | null;
}

const PLACEHOLDER = /\{\{\s*([^\s{}]+)\s*\}\}/g;

export const twinLink = (publicUrl: string, twinId: string) =>
  `${publicUrl.replace(/\/+$/, '')}/#/twins/${twinId}`;

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function resolve(name: string, ctx: PlaceholderContext): unknown {
  const twin = ctx.twin;
  switch (name) {
    case 'twin.title':
      return twin?.title;
    case 'twin.id':
      return twin?.id;
    case 'twin.hierarchy':
      return twin?.hierarchy.join(' / ');
    case 'twinlink':
      return twin ? twinLink(ctx.publicUrl, twin.id) : undefined;
    case 'rule.title':
      return ctx.rule.title;
    case 'rule.id':
      return ctx.rule.id;
    case 'trigger':
      return ctx.trigger;
    case 'time':
      return ctx.time.toISOString();
    case 'alarm.id':
      return ctx.alarm?.id;
    case 'alarm.severity':
      return ctx.alarm?.severity;
    case 'alarm.count':
      return ctx.alarm?.occurrenceCount;
    case 'alarmlink':
      return ctx.alarm ? alarmLink(ctx.publicUrl, ctx.alarm.id) : undefined;
  }
  if (name.startsWith('twin.properties.')) return twin?.properties[name.slice('twin.properties.'.length)];
  if (name.startsWith('states.')) return twin?.states[name.slice('states.'.length)];
  return undefined;
}

export function renderText(template: string, ctx: PlaceholderContext): string {
  return template.replace(PLACEHOLDER, (_all, name: string) => text(resolve(name, ctx)));
}

/** Renders every string inside a JSON value (a webhook or MQTT body given as an object). */
export function renderValue(value: unknown, ctx: PlaceholderContext): unknown {
  if (typeof value === 'string') return renderText(value, ctx);
  if (Array.isArray(value)) return value.map((v) => renderValue(v, ctx));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderValue(v, ctx)]));
  }
  return value;
}
