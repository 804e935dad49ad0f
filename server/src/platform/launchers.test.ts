import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS as DESKTOP_FLAGS } from '../../../electron/server-host.js';
import { SERVER_NODE_FLAGS } from './node-flags.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Every way the server is started passes the same Node flags (node-flags.ts says why they matter). */
describe('server launchers', () => {
  const flags = SERVER_NODE_FLAGS.join(' ');

  it('npm start passes the flags before the entry point', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toContain(`node ${flags} dist/server/src/main.js`);
  });

  it('npm run stellwerk passes them too (its start subcommand runs the server in-process)', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.stellwerk).toContain(`node ${flags} dist/server/src/cli/stellwerk.js`);
  });

  it('the systemd unit starts the package launcher, and the launcher passes them', () => {
    expect(read('installers/linux/stellwerk.service')).toMatch(/^ExecStart=\/usr\/bin\/stellwerk start$/m);
    expect(read('installers/linux/stellwerk')).toContain(`flags="${flags}"`);
  });

  it('the desktop app, the test and benchmark servers and the start-up measurement pass them', () => {
    expect(DESKTOP_FLAGS).toEqual(SERVER_NODE_FLAGS);
    expect(read('test/integration/support/server-process.ts')).toContain('...SERVER_NODE_FLAGS');
    expect(read('scripts/measure-startup.mjs')).toContain(
      `const flags = [${SERVER_NODE_FLAGS.map((f) => `'${f}'`).join(', ')}];`,
    );
  });
});
