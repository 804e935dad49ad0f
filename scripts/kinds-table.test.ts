import fs from 'node:fs';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { PLAIN_DEVICES } from '../server/src/connectors/connector-kind.js';
import { CONNECTOR_KIND_DESCRIPTORS } from '../server/src/connectors/kinds/index.js';
import { KINDS_DOC, renderKindsTable, replaceKindsTable } from './kinds-table.js';

describe('connector kinds table', () => {
  it('matches the kind descriptors (run `npm run docs:kinds` when this fails)', () => {
    const doc = fs.readFileSync(KINDS_DOC, 'utf8');
    expect(replaceKindsTable(doc, renderKindsTable())).toBe(doc);
  });

  it('lists every kind once, in a row of six cells', () => {
    const rows = renderKindsTable().split('\n').slice(2);
    expect(rows).toHaveLength(CONNECTOR_KIND_DESCRIPTORS.length);
    for (const [i, row] of rows.entries()) {
      expect(row.startsWith(`| \`${CONNECTOR_KIND_DESCRIPTORS[i]!.type}\` |`)).toBe(true);
      expect(row.split(/(?<!\\)\|/)).toHaveLength(8);
    }
  });

  it('stars required settings (escaped for Markdown), marks secrets and escapes pipes', () => {
    const [row] = renderKindsTable([
      {
        type: 'x-in',
        direction: 'incoming',
        summary: 'a|b',
        capabilities: [],
        settings: Type.Object({ url: Type.String(), token: Type.Optional(Type.String({ writeOnly: true })) }),
        devices: { ...PLAIN_DEVICES, lowerCaseEui: true },
      },
    ])
      .split('\n')
      .slice(2);
    expect(row).toBe(
      '| `x-in` | incoming | stored only | `url`\\*, `token` (secret) | EUI lower-cased | a\\|b |',
    );
  });

  it('replaces only the text between the markers and refuses a document without them', () => {
    const doc = 'intro\n<!-- kinds:start -->\nold\n<!-- kinds:end -->\noutro\n';
    expect(replaceKindsTable(doc, 'new')).toBe(
      'intro\n<!-- kinds:start -->\nnew\n<!-- kinds:end -->\noutro\n',
    );
    expect(() => replaceKindsTable('no markers', 'new')).toThrow(/markers/);
  });
});
