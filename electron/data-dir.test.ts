import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultDataDir } from '../server/src/config-values.js';
import { effectiveDataDir, readChosenDataDir, serverDefaultDataDir, writeChosenDataDir } from './data-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('desktop data directory', () => {
  it.each([
    ['linux', 1000, { XDG_DATA_HOME: '/home/ada/.data' }],
    ['linux', 1000, {}],
    ['linux', 0, {}],
    ['darwin', 501, {}],
    ['win32', undefined, { PROGRAMDATA: 'D:\\ProgramData' }],
  ] as const)('agrees with the server’s default on %s (uid %s)', (platform, uid, env) => {
    expect(serverDefaultDataDir(env, platform, uid)).toBe(defaultDataDir(env, platform, uid));
  });

  it('takes the environment, else the folder chosen in the window, else the default', () => {
    const source = { platform: 'linux' as const, uid: 1000, chosen: '/srv/chosen' };
    expect(effectiveDataDir({ ...source, env: { STELLWERK_DATA_DIR: '/srv/env' } })).toBe('/srv/env');
    expect(effectiveDataDir({ ...source, env: {} })).toBe('/srv/chosen');
    expect(effectiveDataDir({ ...source, chosen: undefined, env: { XDG_DATA_HOME: '/x' } })).toBe(
      '/x/stellwerk',
    );
  });

  it('remembers the chosen folder and ignores a missing, broken or relative entry', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-datadir-'));
    dirs.push(root);
    const file = path.join(root, 'user-data', 'desktop-settings.json');
    expect(readChosenDataDir(file)).toBeUndefined();
    writeChosenDataDir(file, '/srv/stellwerk');
    expect(readChosenDataDir(file)).toBe('/srv/stellwerk');
    fs.writeFileSync(file, '{"dataDir": "relative"}');
    expect(readChosenDataDir(file)).toBeUndefined();
    fs.writeFileSync(file, '{not json');
    expect(readChosenDataDir(file)).toBeUndefined();
  });
});
