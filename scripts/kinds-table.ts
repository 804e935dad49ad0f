import fs from 'node:fs';
import path from 'node:path';
import type { TSchema } from 'typebox';
import type { ConnectorKindDescriptor } from '../server/src/connectors/connector-kind.js';
import { CONNECTOR_KIND_DESCRIPTORS } from '../server/src/connectors/kinds/index.js';

/**
 * `npm run docs:kinds`: rewrites the connector-kind table in docs/connector-kinds.md from the kind
 * descriptors, so the docs cannot list a kind, setting or capability the server does not have.
 * kinds-table.test.ts fails when the committed table is stale.
 */

export const START_MARKER = '<!-- kinds:start -->';
export const END_MARKER = '<!-- kinds:end -->';
export const KINDS_DOC = path.resolve(import.meta.dirname, '..', 'docs', 'connector-kinds.md');

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** `url`\*, `password` (secret): required settings starred (escaped, not emphasis), secrets marked. */
function settingsCell(kind: ConnectorKindDescriptor): string {
  if (kind.freeForm) return 'free-form; secret-looking keys sealed';
  const required = new Set(kind.settings.required ?? []);
  const properties = Object.entries(kind.settings.properties as Record<string, TSchema>);
  if (properties.length === 0) return '—';
  return properties
    .map(([key, schema]) => {
      const secret = (schema as { writeOnly?: boolean }).writeOnly ? ' (secret)' : '';
      return `\`${key}\`${required.has(key) ? '\\*' : ''}${secret}`;
    })
    .join(', ');
}

function devicesCell(kind: ConnectorKindDescriptor): string {
  const rules = [
    ...kind.devices.required.map((field) => `needs \`${field}\``),
    ...(kind.devices.lowerCaseEui ? ['EUI lower-cased'] : []),
    ...(kind.devices.endDeviceId ? ['EndDevice ID made when missing'] : []),
  ];
  return rules.join('; ') || '—';
}

export function renderKindsTable(
  kinds: readonly ConnectorKindDescriptor[] = CONNECTOR_KIND_DESCRIPTORS,
): string {
  const lines = [
    '| Kind | Direction | Capabilities | Settings (\\* required) | Devices | What it does |',
    '|---|---|---|---|---|---|',
  ];
  for (const kind of kinds) {
    const capabilities = kind.capabilities.length > 0 ? kind.capabilities.join(', ') : 'stored only';
    lines.push(
      `| \`${kind.type}\` | ${kind.direction} | ${capabilities} | ${cell(settingsCell(kind))} | ${cell(devicesCell(kind))} | ${cell(kind.summary)} |`,
    );
  }
  return lines.join('\n');
}

/** The document with the text between the markers replaced by `table`. */
export function replaceKindsTable(doc: string, table: string): string {
  const start = doc.indexOf(START_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start < 0 || end < start)
    throw new Error(`docs/connector-kinds.md needs the markers ${START_MARKER} and ${END_MARKER}`);
  return `${doc.slice(0, start + START_MARKER.length)}\n${table}\n${doc.slice(end)}`;
}

if (path.resolve(process.argv[1] ?? '') === import.meta.filename) {
  const before = fs.readFileSync(KINDS_DOC, 'utf8');
  const after = replaceKindsTable(before, renderKindsTable());
  if (after === before) console.log('docs/connector-kinds.md is up to date');
  else {
    fs.writeFileSync(KINDS_DOC, after);
    console.log(`docs/connector-kinds.md rewritten (${CONNECTOR_KIND_DESCRIPTORS.length} kinds)`);
  }
}
