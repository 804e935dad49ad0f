import type { Body, Reply } from '../../api/generated';
import { splitLabels } from './bulk-edit';
import {
  healthBodyOf,
  healthDraftOf,
  text,
  type HealthConfig,
  type RuleRow,
  type ValueType,
} from './driver-form';

export type Template = Reply<'GET /xapi/v1/device-templates/{id}'>;
export type TemplateBody = Body<'POST /xapi/v1/device-templates'>;
type KvValue = string | number | boolean | null;

export interface PropertyRow {
  id: number;
  key: string;
  value: string;
}

export interface TemplateDraft {
  title: string;
  description: string;
  deviceDriverId: string;
  connectorType: string;
  tags: string;
  groups: string;
  properties: PropertyRow[];
  ownHealth: boolean;
  rules: RuleRow[];
  silentAfterSeconds: string;
}

export function templateDraftOf(template?: Template): TemplateDraft {
  const health = template?.healthConfig as Partial<HealthConfig> | null | undefined;
  const ruleRows = healthDraftOf(health);
  return {
    title: template?.title ?? '',
    description: template?.description ?? '',
    deviceDriverId: template?.deviceDriverId ?? '',
    connectorType: template?.connectorType ?? '',
    tags: template?.tags.join(', ') ?? '',
    groups: template?.groups.join(', ') ?? '',
    properties: Object.entries(template?.keyValueData ?? {}).map(([key, value], id) => ({
      id,
      key,
      value: text(value),
    })),
    ownHealth: Boolean(health),
    rules: ruleRows.rules,
    silentAfterSeconds: ruleRows.silentAfterSeconds,
  };
}

/** A property keeps the type it had (a number stays a number when the text still is one). */
function propertyValue(text: string, before: unknown): KvValue {
  if (typeof before === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (typeof before === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

export function templateBodyOf(
  draft: TemplateDraft,
  variables: readonly { key: string; type: ValueType }[],
  before?: Template,
): TemplateBody {
  const keyValueData: Record<string, KvValue> = {};
  for (const row of draft.properties) {
    const key = row.key.trim();
    if (key) keyValueData[key] = propertyValue(row.value, before?.keyValueData[key]);
  }
  // The template's schema types the health configuration as a free object.
  const health = healthBodyOf(
    draft.rules,
    draft.silentAfterSeconds,
    variables,
  ) as unknown as TemplateBody['healthConfig'];
  return {
    title: draft.title.trim(),
    description: draft.description,
    deviceDriverId: draft.deviceDriverId || null,
    connectorType: draft.connectorType || null,
    tags: splitLabels(draft.tags),
    groups: splitLabels(draft.groups),
    keyValueData,
    healthConfig: draft.ownHealth ? health : null,
  };
}
