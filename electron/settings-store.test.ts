import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { currentServerConfig, loadSettings, saveSettings, type SettingsStore } from './settings-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function setup(env: NodeJS.ProcessEnv = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-settings-'));
  dirs.push(root);
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir);
  fs.writeFileSync(
    path.join(dataDir, 'stellwerk.conf'),
    '# by hand\nSTELLWERK_LOG_LEVEL=debug\nSTELLWERK_HTTP_PORT=8080\n',
  );
  const store: SettingsStore = {
    env: { STELLWERK_DATA_DIR: dataDir, ...env },
    desktopSettingsFile: path.join(root, 'user-data', 'desktop-settings.json'),
    platform: 'linux',
    uid: 1000,
  };
  return { root, dataDir, store };
}

const form = (dataDir: string) => ({
  httpPort: '9090',
  mqttPort: '1884',
  dataDir,
  publicUrl: '',
  https: 'self-signed',
  certFile: '',
  keyFile: '',
});

describe('settings store', () => {
  it('writes the window’s values into stellwerk.conf, keeps the rest, and says a restart is due', () => {
    const { dataDir, store } = setup();
    expect(saveSettings(store, form(dataDir))).toEqual({ ok: true, changed: true });
    expect(fs.readFileSync(path.join(dataDir, 'stellwerk.conf'), 'utf8')).toBe(
      '# by hand\nSTELLWERK_LOG_LEVEL=debug\nSTELLWERK_HTTP_PORT=9090\nSTELLWERK_MQTT_PORT=1884\nSTELLWERK_HTTPS=self-signed\n',
    );
    expect(loadSettings(store).values).toMatchObject({
      httpPort: '9090',
      mqttPort: '1884',
      https: 'self-signed',
    });
    expect(saveSettings(store, form(dataDir))).toEqual({ ok: true, changed: false });
  });

  it('writes nothing when a field is invalid', () => {
    const { dataDir, store } = setup();
    const before = fs.readFileSync(path.join(dataDir, 'stellwerk.conf'), 'utf8');
    expect(saveSettings(store, { ...form(dataDir), httpPort: '70000' })).toEqual({
      ok: false,
      errors: { httpPort: 'a whole number from 1 to 65535' },
    });
    expect(fs.readFileSync(path.join(dataDir, 'stellwerk.conf'), 'utf8')).toBe(before);
  });

  it('moves to a new data directory, taking the settings file along, and remembers it', () => {
    const { root, dataDir, store } = setup();
    const movable = { ...store, env: {} };
    fs.mkdirSync(path.dirname(store.desktopSettingsFile), { recursive: true });
    fs.writeFileSync(store.desktopSettingsFile, JSON.stringify({ dataDir }));
    const next = path.join(root, 'elsewhere', 'stellwerk');
    expect(saveSettings(movable, form(next))).toEqual({ ok: true, changed: true });
    expect(currentServerConfig(movable)).toEqual({
      dataDir: next,
      conf: {
        STELLWERK_LOG_LEVEL: 'debug',
        STELLWERK_HTTP_PORT: '9090',
        STELLWERK_MQTT_PORT: '1884',
        STELLWERK_HTTPS: 'self-signed',
      },
    });
    // The old directory's file is left as it was.
    expect(fs.readFileSync(path.join(dataDir, 'stellwerk.conf'), 'utf8')).toContain(
      'STELLWERK_HTTP_PORT=8080',
    );
  });

  it('keeps the data directory the environment sets, whatever the page sends', () => {
    const { root, dataDir, store } = setup();
    expect(saveSettings(store, form(path.join(root, 'ignored')))).toEqual({ ok: true, changed: true });
    expect(currentServerConfig(store).dataDir).toBe(dataDir);
    expect(fs.existsSync(path.join(root, 'ignored'))).toBe(false);
  });
});
