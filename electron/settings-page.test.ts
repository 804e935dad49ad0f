import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIELD_VARIABLES, HTTPS_MODES } from './settings-form.js';

const html = fs.readFileSync(path.join(import.meta.dirname, 'settings-window', 'settings.html'), 'utf8');
const all = (pattern: RegExp) => [...html.matchAll(pattern)].map((m) => m[1]);

describe('settings page', () => {
  it('has an input and an error line for every field the main process checks', () => {
    const fields = Object.keys(FIELD_VARIABLES).sort();
    expect([...new Set(all(/<input[^>]*\sname="(\w+)"/g))].sort()).toEqual(fields);
    expect(all(/data-for="(\w+)"/g).sort()).toEqual(fields);
    expect(all(/name="https" value="([\w-]+)"/g)).toEqual([...HTTPS_MODES]);
  });

  it('allows only its own script and style, and no inline code', () => {
    expect(html).toContain(
      `content="default-src 'none'; script-src 'self'; style-src 'self'; form-action 'none'; base-uri 'none'"`,
    );
    expect(html).not.toMatch(/<script>|\son\w+="|style="/);
  });
});
