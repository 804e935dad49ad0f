import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../server/src/config.js';
import { selfSignedFiles } from '../server/src/platform/tls/https-certificate.js';
import { parseConf } from './conf-file.js';
import { desktopSettings } from './server-host.js';
import { currentServerConfig, saveSettings, type SettingsStore } from './settings-store.js';

/**
 * The desktop's idea of the server's HTTPS against the server's own: the settings the app derives
 * are handed to the server's loadConfig, exactly as the started server would read them.
 */

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-https-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

interface Case {
  name: string;
  env?: Record<string, string>;
  /** stellwerk.conf lines in the data directory. */
  conf?: Record<string, string>;
}

const CERT = {
  STELLWERK_HTTPS_CERT: '/etc/stellwerk/cert.pem',
  STELLWERK_HTTPS_KEY: '/etc/stellwerk/key.pem',
};
const RELATIVE_CERT = { STELLWERK_HTTPS_CERT: 'certs/cert.pem', STELLWERK_HTTPS_KEY: 'certs/key.pem' };

const CASES: Case[] = [
  { name: 'nothing set' },
  { name: 'self-signed in the environment', env: { STELLWERK_HTTPS: 'self-signed' } },
  { name: 'mode in odd case and spacing', env: { STELLWERK_HTTPS: ' Self-Signed ' } },
  { name: 'self-signed in the file', conf: { STELLWERK_HTTPS: 'self-signed' } },
  {
    name: 'environment off over the file',
    env: { STELLWERK_HTTPS: 'off' },
    conf: { STELLWERK_HTTPS: 'self-signed' },
  },
  {
    name: 'environment self-signed over file off',
    env: { STELLWERK_HTTPS: 'self-signed' },
    conf: { STELLWERK_HTTPS: 'off' },
  },
  { name: 'certificate files in the environment', env: CERT },
  { name: 'relative certificate files in the file', conf: RELATIVE_CERT },
  { name: 'on in the environment, files from the file', env: { STELLWERK_HTTPS: 'on' }, conf: CERT },
  { name: 'ON in the file with files', conf: { STELLWERK_HTTPS: 'ON', ...CERT } },
  { name: 'off with certificate files named', env: { STELLWERK_HTTPS: 'off', ...CERT } },
  { name: 'off in the file with files in the environment', env: CERT, conf: { STELLWERK_HTTPS: 'off' } },
  { name: 'an empty certificate variable hides the file', env: { STELLWERK_HTTPS_CERT: '' }, conf: CERT },
  {
    name: 'another port with self-signed',
    env: { STELLWERK_HTTPS: 'self-signed', STELLWERK_HTTP_PORT: '9443' },
  },
  { name: 'port from the file', conf: { STELLWERK_HTTPS: 'self-signed', STELLWERK_HTTP_PORT: '9555' } },
  { name: 'an unknown mode', env: { STELLWERK_HTTPS: 'yes' } },
  { name: 'an empty mode variable', env: { STELLWERK_HTTPS: '' }, conf: { STELLWERK_HTTPS: 'self-signed' } },
];

/** The server's configuration from these settings, or the variable it refuses. */
function serverReads(env: NodeJS.ProcessEnv) {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return { refused: error.message };
    throw error;
  }
}

describe('desktopSettings and the server agree on HTTPS', () => {
  it.each(CASES)('$name', ({ env = {}, conf = {} }) => {
    const dataDir = tempDir();
    const confText = Object.entries(conf)
      .map(([key, value]) => `${key}=${value}\n`)
      .join('');
    fs.writeFileSync(path.join(dataDir, 'stellwerk.conf'), confText);
    const settings = desktopSettings({
      env: { ...env, STELLWERK_DATA_DIR: dataDir },
      conf: parseConf(confText),
      dataDir,
      isPackaged: false,
      resourcesPath: '',
      // The server resolves relative paths against its working directory; here that is this process's.
      appPath: process.cwd(),
      platform: process.platform,
    });
    const spawnEnv = settings.spawn!.env;
    const server = serverReads(spawnEnv);
    // What the server would have chosen itself for the public URL the app passes explicitly.
    const ownDefault = serverReads({ ...spawnEnv, STELLWERK_PUBLIC_URL: undefined });

    if ('refused' in server) {
      expect(server.refused).toMatch(/STELLWERK_HTTPS/);
      expect(settings.url.startsWith('http://')).toBe(true);
      expect(settings.certFile).toBeUndefined();
      return;
    }
    const https = server.https !== 'off';
    expect(new URL(settings.url).protocol).toBe(https ? 'https:' : 'http:');
    expect(new URL(settings.url).port).toBe(String(server.httpPort));
    expect('refused' in ownDefault ? undefined : ownDefault.publicUrl).toBe(server.publicUrl);
    expect(server.publicUrl).toBe(`${https ? 'https' : 'http'}://localhost:${server.httpPort}`);
    const served =
      server.https === 'self-signed'
        ? selfSignedFiles(server.dataDir).cert
        : server.https === 'on'
          ? server.httpsCert
          : undefined;
    expect(settings.certFile).toBe(served);
  });
});

describe('a restart after the settings window saved', () => {
  it('reads the new scheme and certificate, as main.ts readSettings does', () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const store: SettingsStore = {
      env: {},
      desktopSettingsFile: path.join(root, 'desktop-settings.json'),
      platform: 'linux',
      uid: 1000,
    };
    const form = { httpPort: '9443', mqttPort: '1884', dataDir, publicUrl: '', certFile: '', keyFile: '' };
    const reread = () => {
      const current = currentServerConfig(store);
      return desktopSettings({
        env: store.env,
        ...current,
        isPackaged: false,
        resourcesPath: '',
        appPath: root,
        platform: 'linux',
      });
    };

    expect(saveSettings(store, { ...form, https: 'self-signed' })).toMatchObject({ ok: true, changed: true });
    const on = reread();
    expect(on.url).toBe('https://127.0.0.1:9443');
    expect(on.certFile).toBe(path.join(dataDir, 'tls', 'self-signed-cert.pem'));
    expect(on.spawn?.env.STELLWERK_PUBLIC_URL).toBe('https://localhost:9443');

    expect(saveSettings(store, { ...form, https: 'off' })).toMatchObject({ ok: true, changed: true });
    const off = reread();
    expect(off.url).toBe('http://127.0.0.1:9443');
    expect(off.certFile).toBeUndefined();
    expect(off.spawn?.env.STELLWERK_PUBLIC_URL).toBe('http://localhost:9443');
  });
});
