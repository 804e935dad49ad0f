import type { Reply } from '../../api/generated';

/**
 * The OPC UA node picker's edits of the opcua kind's `nodes` setting, which the form keeps as JSON
 * text (a list of `{ nodeId, deviceId, state }`). Pure, so unit-tested without a browser.
 */

/** A child node as the browse route answers it. */
export type BrowsedNode = Reply<'GET /xapi/v1/connectors/{id}/opcua/browse'>['data'][number];

interface MappedNode {
  nodeId?: unknown;
  deviceId?: unknown;
  state?: unknown;
}

function parsedList(text: string): MappedNode[] | undefined {
  if (text.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as MappedNode[]) : undefined;
  } catch {
    return undefined;
  }
}

/** Node ids the text maps already (none while the text is not a JSON list). */
export function mappedNodeIds(text: string): Set<string> {
  const list = parsedList(text) ?? [];
  return new Set(list.map((node) => node.nodeId).filter((id): id is string => typeof id === 'string'));
}

/**
 * A state name from the node's display name: letters, digits, `_` and `-` kept, anything else `_`,
 * never a leading `_` (those states are Stellwerk's own: `_raw`, `_meta.*`).
 */
export function stateNameOf(node: BrowsedNode): string {
  const name = node.displayName || node.browseName.replace(/^\d+:/, '');
  const cleaned = name
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
  return cleaned === '' ? 'value' : cleaned;
}

/**
 * The text with `node` appended (device id as given, state from its name), pretty-printed. A text
 * that is not a JSON list is left as it is: the form's own check names the problem, and nothing the
 * user typed is overwritten.
 */
export function addedNodes(text: string, node: BrowsedNode, deviceId: string): string {
  const list = parsedList(text);
  if (!list) return text;
  if (list.some((entry) => entry.nodeId === node.nodeId)) return text;
  return JSON.stringify([...list, { nodeId: node.nodeId, deviceId, state: stateNameOf(node) }], null, 2);
}
