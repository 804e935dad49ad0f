import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '../server/src/config.js';
import { README, renderEnvTable, replaceEnvTable } from './env-table.js';

describe('README environment table', () => {
  it('matches ENV_VARIABLES in server/src/config.ts (run `npm run docs:env` when this fails)', () => {
    const readme = fs.readFileSync(README, 'utf8');
    expect(replaceEnvTable(readme, renderEnvTable())).toBe(readme);
  });

  it('lists every variable once, in a row of three cells', () => {
    const rows = renderEnvTable().split('\n').slice(2);
    expect(rows).toHaveLength(ENV_VARIABLES.length);
    for (const [i, row] of rows.entries()) {
      expect(row.startsWith(`| \`${ENV_VARIABLES[i]!.name}\` |`)).toBe(true);
      expect(row.split(/(?<!\\)\|/)).toHaveLength(5);
    }
  });

  it('escapes pipes and line breaks so a description cannot break the table', () => {
    const table = renderEnvTable([{ name: 'X', defaultText: 'a|b', description: 'one\ntwo' }]);
    expect(table.split('\n')[2]).toBe('| `X` | a\\|b | one two |');
  });

  it('replaces only the text between the markers and refuses a README without them', () => {
    const readme = 'intro\n<!-- env:start -->\nold\n<!-- env:end -->\noutro\n';
    expect(replaceEnvTable(readme, 'new')).toBe('intro\n<!-- env:start -->\nnew\n<!-- env:end -->\noutro\n');
    expect(() => replaceEnvTable('no markers', 'new')).toThrow(/markers/);
  });
});
