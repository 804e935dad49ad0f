import type { Body, Reply } from '../../api/generated';
import { schemaProblem, type SchemaProblemTexts } from '../format/schema-problem';

/** The flow editor's draft and how it becomes the XAPI body (docs/integration-flows.md). */

export type Flow = Reply<'GET /xapi/v1/integration-flows/{id}'>;
export type FlowBody = Body<'POST /xapi/v1/integration-flows'>;
export type FlowRun = Reply<'GET /xapi/v1/integration-flows/{id}/runs'>['data'][number];
export type ScriptKind = 'filter' | 'transformer';

export interface StepRow {
  key: number;
  type: ScriptKind;
  id: string;
}

export interface TargetRow {
  key: number;
  connectorId: string;
  topic: string;
  subject: string;
}

export interface FlowDraft {
  title: string;
  description: string;
  active: boolean;
  sourceType: 'packets' | 'alarms';
  connectorIds: string[];
  deviceIds: string[];
  categories: string;
  steps: StepRow[];
  targets: TargetRow[];
}

/** The category connector monitoring writes (spec: connector monitoring), offered as a suggestion. */
export const MONITORING_CATEGORY = 'Konnektorüberwachung';

let nextKey = 1;
export const rowKey = (): number => nextKey++;

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

export function flowDraft(flow?: Flow): FlowDraft {
  const source = flow?.source ?? {};
  return {
    title: flow?.title ?? '',
    description: flow?.description ?? '',
    active: flow?.active ?? true,
    sourceType: source.type === 'alarms' ? 'alarms' : 'packets',
    connectorIds: strings(source.connectorIds),
    deviceIds: strings(source.deviceIds),
    categories: strings(source.categories).join(', '),
    steps: (flow?.steps ?? []).map((step) => ({
      key: rowKey(),
      type: step.type === 'filter' ? 'filter' : 'transformer',
      id: step.id,
    })),
    targets: (flow?.targets ?? []).map((target) => ({
      key: rowKey(),
      connectorId: typeof target.connectorId === 'string' ? target.connectorId : '',
      topic: typeof target.topic === 'string' ? target.topic : '',
      subject: typeof target.subject === 'string' ? target.subject : '',
    })),
  };
}

export function flowBody(draft: FlowDraft): Omit<FlowBody, 'accountId'> {
  const categories = draft.categories
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return {
    title: draft.title.trim(),
    description: draft.description.trim(),
    active: draft.active,
    source:
      draft.sourceType === 'packets'
        ? { type: 'packets', connectorIds: draft.connectorIds, deviceIds: draft.deviceIds }
        : { type: 'alarms', categories },
    steps: draft.steps.map((step) => ({ type: step.type, id: step.id })),
    targets: draft.targets.map((target) => ({
      connectorId: target.connectorId,
      ...(target.topic.trim() ? { topic: target.topic.trim() } : {}),
      ...(target.subject.trim() ? { subject: target.subject.trim() } : {}),
    })),
  };
}

/** Moves the item at `index` one place up (-1) or down (+1); returns whether it moved. */
export function move<T>(items: T[], index: number, by: -1 | 1): boolean {
  const to = index + by;
  if (to < 0 || to >= items.length) return false;
  const [item] = items.splice(index, 1);
  items.splice(to, 0, item!);
  return true;
}

/** Pretty JSON for input, output and error panes (text as it is). */
export function pretty(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}

/**
 * The problems of a 400 as `path → message` (`/source/connectorIds` etc.), the first per path:
 * worded in the console's language from the keyword (`t`: `i18n.t.schemaProblems`), else the
 * server's message.
 */
export function problemsOf(details: unknown[], t: SchemaProblemTexts): Map<string, string> {
  const found = new Map<string, string>();
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null) continue;
    const { path } = detail as { path?: unknown };
    const problem = schemaProblem(detail, t);
    if (typeof path === 'string' && path && problem && !found.has(path)) found.set(path, problem);
  }
  return found;
}
