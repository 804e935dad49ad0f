import { api } from '../../api/client';
import type { Reply } from '../../api/generated';

/**
 * The data-state sources as the server describes them (`GET /xapi/v1/state-sources`,
 * docs/adr/0074-connector-kind-descriptors.md): the source choice and each source's fields come from
 * here, not from lists in the console.
 */

export type StateSourceInfo = Reply<'GET /xapi/v1/state-sources'>['data'][number];
export type SourceWidget = StateSourceInfo['form'][number]['widget'];

export interface SourceField {
  key: string;
  widget: SourceWidget;
  /** `choice`: the schema's constants, in its order. */
  choices: string[];
}

let catalogue: Promise<StateSourceInfo[]> | null = null;

/** The sources, fetched once while the page lives. */
export function loadStateSources(): Promise<StateSourceInfo[]> {
  if (!catalogue) {
    catalogue = api.call('GET /xapi/v1/state-sources', {}).then((reply) => reply.data);
    catalogue.catch(() => (catalogue = null));
  }
  return catalogue;
}

interface JsonSchema {
  anyOf?: Array<{ const?: unknown }>;
  properties?: Record<string, JsonSchema>;
}

/** A source's console fields with the choices its schema allows. */
export function sourceFields(source: StateSourceInfo | undefined): SourceField[] {
  const properties = (source?.settings as JsonSchema | undefined)?.properties ?? {};
  return (source?.form ?? []).map(({ key, widget }) => ({
    key,
    widget,
    choices: (properties[key]?.anyOf ?? []).filter((b) => 'const' in b).map((b) => String(b.const)),
  }));
}
