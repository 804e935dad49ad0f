import { alarmSettingsOf, clearDraftOf } from './alarm-command-form';
import type { Body, Reply } from '../../api/generated';
import { areaProblem, SAMPLE_AREA } from './rule-area';

/**
 * The rule editor's form state and its conversion to and from the XAPI's rule body (docs/rules.md).
 * Pure, so the conversions are unit-tested without a browser.
 */

export type Rule = Reply<'GET /xapi/v1/rules/{id}'>;
export type RuleBody = Body<'POST /xapi/v1/rules'>;
export type TriggerType = 'event' | 'time' | 'location';
export type ScheduleKind = 'at' | 'cron' | 'interval';
export type ValueType = 'number' | 'integer' | 'boolean' | 'string' | 'object';

export const COMMAND_TYPES = [
  'webhook',
  'email',
  'mqtt-publish',
  'set-state',
  'aggregate-trigger',
  'alarm',
] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

import { valueInput } from './rule-operators';

export { ALL_OPERATORS, OPERATORS_BY_TYPE, operatorsFor, valueInput } from './rule-operators';

export const PLACEHOLDERS = [
  '{{twin.title}}',
  '{{twin.id}}',
  '{{twin.hierarchy}}',
  '{{twin.properties.KEY}}',
  '{{states.KEY}}',
  '{{rule.title}}',
  '{{rule.id}}',
  '{{trigger}}',
  '{{time}}',
  '{{twinlink}}',
] as const;

export interface ConditionDraft {
  stateKey: string;
  operator: string;
  value: string;
  /** The upper bound of `between`. */
  value2: string;
}

export interface CommandDraft {
  type: CommandType;
  connectorId: string;
  subject: string;
  body: string;
  to: string;
  topic: string;
  headers: string;
  stateKey: string;
  value: string;
  message: string;
  category: string;
  /** Alarm: empty means the server's default (warning). */
  severity: string;
  /** Alarm: one clear condition (empty state key: none). */
  clearKey: string;
  clearOperator: string;
  clearValue: string;
  /** Conditions after the first and `match` of a clear set through the API: kept as they are. */
  clearRest: { conditions: unknown[]; match?: string };
}

export interface RuleDraft {
  title: string;
  description: string;
  active: boolean;
  twinId: string;
  triggerType: TriggerType;
  conditions: ConditionDraft[];
  match: 'all' | 'any';
  onChangeOnly: boolean;
  scheduleKind: ScheduleKind;
  /** `datetime-local` text, read in the browser's time zone. */
  at: string;
  cron: string;
  intervalSeconds: string;
  area: string;
  on: 'enter' | 'leave' | 'both';
  position: 'location' | 'coordinates';
  locationKey: string;
  latitudeKey: string;
  longitudeKey: string;
  commands: CommandDraft[];
}

export const emptyCondition = (): ConditionDraft => ({ stateKey: '', operator: '>', value: '', value2: '' });

export function emptyCommand(type: CommandType): CommandDraft {
  return {
    type,
    connectorId: '',
    subject: type === 'email' ? '{{rule.title}}: {{twin.title}}' : '',
    body: type === 'email' ? '{{twin.title}} ({{twinlink}})' : type === 'set-state' ? '' : '',
    to: '',
    topic: '',
    headers: '',
    stateKey: '',
    value: '',
    message: type === 'alarm' ? '{{rule.title}}: {{twin.title}}' : '',
    category: '',
    severity: '',
    clearKey: '',
    clearOperator: '<',
    clearValue: '',
    clearRest: { conditions: [] },
  };
}

export function draftOf(rule?: Rule): RuleDraft {
  const draft: RuleDraft = {
    title: rule?.title ?? '',
    description: rule?.description ?? '',
    active: rule?.active ?? true,
    twinId: rule?.twinId ?? '',
    triggerType: 'event',
    conditions: [emptyCondition()],
    match: 'all',
    onChangeOnly: true,
    scheduleKind: 'interval',
    at: '',
    cron: '0 8 * * 1-5',
    intervalSeconds: '3600',
    area: SAMPLE_AREA,
    on: 'both',
    position: 'location',
    locationKey: 'location',
    latitudeKey: '',
    longitudeKey: '',
    commands: [],
  };
  if (!rule) return draft;
  const t = rule.trigger;
  if (t.type === 'event') {
    draft.triggerType = 'event';
    draft.conditions = ((t.conditions as Array<Record<string, unknown>>) ?? []).map(conditionDraftOf);
    draft.match = t.match === 'any' ? 'any' : 'all';
    draft.onChangeOnly = t.onChangeOnly !== false;
  } else if (t.type === 'time') {
    draft.triggerType = 'time';
    const s = (t.schedule ?? {}) as { at?: string; cron?: string; intervalSeconds?: number };
    if (s.at !== undefined) {
      draft.scheduleKind = 'at';
      draft.at = localInput(s.at);
    } else if (s.cron !== undefined) {
      draft.scheduleKind = 'cron';
      draft.cron = s.cron;
    } else {
      draft.scheduleKind = 'interval';
      draft.intervalSeconds = String(s.intervalSeconds ?? '');
    }
  } else if (t.type === 'location') {
    draft.triggerType = 'location';
    draft.area = JSON.stringify(t.area, null, 2);
    draft.on = t.on === 'enter' || t.on === 'leave' ? t.on : 'both';
    if (typeof t.latitudeKey === 'string') {
      draft.position = 'coordinates';
      draft.latitudeKey = t.latitudeKey;
      draft.longitudeKey = scalar(t.longitudeKey);
    } else draft.locationKey = typeof t.locationKey === 'string' ? t.locationKey : 'location';
  }
  draft.commands = rule.commands.map(commandDraftOf);
  return draft;
}

/** A stored scalar as form text; anything else (absent, an object) as empty text. */
function scalar(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

function conditionDraftOf(c: Record<string, unknown>): ConditionDraft {
  const value = c.value;
  return {
    stateKey: scalar(c.stateKey),
    operator: scalar(c.operator) || '==',
    value: Array.isArray(value) ? scalar(value[0]) : scalar(value),
    value2: Array.isArray(value) ? scalar(value[1]) : '',
  };
}

const text = (v: unknown) =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v, null, 2);

function commandDraftOf(c: Record<string, unknown>): CommandDraft {
  const type = (COMMAND_TYPES as readonly string[]).includes(String(c.type))
    ? (c.type as CommandType)
    : 'alarm';
  return {
    ...emptyCommand(type),
    connectorId: scalar(c.connectorId),
    subject: text(c.subject),
    body: text(c.body),
    to: Array.isArray(c.to) ? c.to.join(', ') : '',
    topic: text(c.topic),
    headers: c.headers ? JSON.stringify(c.headers, null, 2) : '',
    stateKey: scalar(c.stateKey),
    value: text(c.value),
    message: text(c.message),
    category: text(c.category),
    ...clearDraftOf(c.clear),
    severity: scalar(c.severity),
  };
}

/** `2026-11-22T09:30` in the browser's time zone for an ISO instant. */
export function localInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A typed value from a text field: numbers, true/false and JSON as such when the state's type says so. */
export function typedValue(input: string | number, valueType: string | undefined): unknown {
  const raw = String(input);
  const value = raw.trim();
  if (valueType === 'string') return raw;
  if (valueType === 'number' || valueType === 'integer') return value === '' ? raw : Number(value);
  if (valueType === 'boolean') return value === 'true' ? true : value === 'false' ? false : raw;
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value !== '' && Number.isFinite(Number(value))) return Number(value);
  if (valueType === 'object' || /^[[{]/.test(value)) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return raw;
    }
  }
  return raw;
}

/** A condition in the XAPI's shape; `valueType` is the state's type when a twin is chosen. */
export function conditionOf(
  c: ConditionDraft,
  valueType?: string,
): { stateKey: string; operator: string; value?: unknown } {
  // Number inputs bind numbers, not text; read every value as text first.
  const value = String(c.value ?? '');
  const value2 = String(c.value2 ?? '');
  // An empty bound goes as null, never as Number('') = 0: Chromium empties a number input that holds
  // no number (1e999), and the server then refuses the range instead of storing 0.
  const bound = (text: string) => (text.trim() === '' ? null : Number(text));
  const base = { stateKey: c.stateKey.trim(), operator: c.operator };
  switch (valueInput(c.operator)) {
    case 'none':
      return base;
    case 'range':
      return { ...base, value: [bound(value), bound(value2)] };
    case 'number':
      return { ...base, value: value.trim() === '' ? null : Number(value) };
    default:
      return ['contains', 'matches', 'hasKey'].includes(c.operator)
        ? { ...base, value }
        : { ...base, value: typedValue(value, valueType) };
  }
}

/** Parses a JSON text field; `undefined` for an empty one. Throws a message for broken JSON. */
function jsonOrText(raw: string): unknown {
  const value = raw.trim();
  if (!/^[[{]/.test(value)) return raw;
  return JSON.parse(value) as unknown;
}

export function commandOf(
  c: CommandDraft,
  valueTypes: Map<string, string>,
): Record<string, unknown> & { type: string } {
  const list = (v: string) =>
    v
      .split(/[,;\s]+/)
      .map((s) => s.trim())
      .filter(Boolean);
  switch (c.type) {
    case 'webhook':
      return {
        type: c.type,
        connectorId: c.connectorId,
        body: c.body.trim() ? jsonOrText(c.body) : {},
        ...(c.headers.trim() ? { headers: JSON.parse(c.headers) as unknown } : {}),
      };
    case 'email':
      return {
        type: c.type,
        connectorId: c.connectorId,
        subject: c.subject,
        body: c.body,
        ...(list(c.to).length ? { to: list(c.to) } : {}),
      };
    case 'mqtt-publish':
      return {
        type: c.type,
        connectorId: c.connectorId,
        ...(c.topic.trim() ? { topic: c.topic.trim() } : {}),
        body: c.body.trim() ? jsonOrText(c.body) : {},
      };
    case 'set-state':
      return { type: c.type, stateKey: c.stateKey, value: typedValue(c.value, valueTypes.get(c.stateKey)) };
    case 'aggregate-trigger':
      return { type: c.type, stateKey: c.stateKey };
    case 'alarm':
      return {
        type: c.type,
        message: c.message,
        ...(c.category.trim() ? { category: c.category.trim() } : {}),
        ...alarmSettingsOf(c),
      };
  }
}

export interface FormProblems {
  /** Messages by the XAPI's body path (`/trigger/area`, `/commands/0`). */
  problems: Map<string, string>;
  body?: RuleBody;
}

/**
 * The rule body, or the problems the console finds itself (broken JSON, an area that is no
 * GeoJSON area) under the same paths the server uses, so both show next to the same fields.
 */
export function bodyOf(
  draft: RuleDraft,
  valueTypes: Map<string, string>,
  messages: { json: string },
): FormProblems {
  const problems = new Map<string, string>();
  let trigger: RuleBody['trigger'];
  if (draft.triggerType === 'event') {
    trigger = {
      type: 'event',
      conditions: draft.conditions.map((c) => conditionOf(c, valueTypes.get(c.stateKey.trim()))),
      match: draft.match,
      onChangeOnly: draft.onChangeOnly,
    };
  } else if (draft.triggerType === 'time') {
    // An emptied number input binds null: the interval is left out, never sent as Number(null) = 0,
    // so the server says the schedule is empty instead of "must be at least 1".
    const interval = String(draft.intervalSeconds ?? '').trim();
    const schedule =
      draft.scheduleKind === 'at'
        ? { at: draft.at ? new Date(draft.at).toISOString() : '' }
        : draft.scheduleKind === 'cron'
          ? { cron: draft.cron.trim() }
          : interval === ''
            ? {}
            : { intervalSeconds: Number(interval) };
    trigger = { type: 'time', schedule };
  } else {
    let area: unknown = {};
    try {
      area = JSON.parse(draft.area) as unknown;
      const problem = areaProblem(area);
      if (problem) problems.set('/trigger/area', problem);
    } catch (error) {
      problems.set('/trigger/area', `${messages.json}: ${(error as Error).message}`);
    }
    trigger = {
      type: 'location',
      area: area as Record<string, never>,
      on: draft.on,
      ...(draft.position === 'coordinates'
        ? { latitudeKey: draft.latitudeKey.trim(), longitudeKey: draft.longitudeKey.trim() }
        : { locationKey: draft.locationKey.trim() || 'location' }),
    };
  }
  const commands = draft.commands.map((c, i) => {
    try {
      return commandOf(c, valueTypes);
    } catch (error) {
      problems.set(`/commands/${i}`, `${messages.json}: ${(error as Error).message}`);
      return { type: c.type };
    }
  });
  const body: RuleBody = {
    title: draft.title.trim(),
    description: draft.description,
    active: draft.active,
    twinId: draft.twinId || null,
    trigger,
    commands,
  };
  return problems.size ? { problems } : { problems, body };
}
