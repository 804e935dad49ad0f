import { describe, expect, it } from 'vitest';
import { checkSettings, confChanges, settingsView, type SettingsValues } from './settings-form.js';

const VALID: SettingsValues = {
  httpPort: '8080',
  mqttPort: '1883',
  dataDir: '/srv/stellwerk',
  publicUrl: 'https://stellwerk.example.com',
  https: 'off',
  certFile: '',
  keyFile: '',
};
const files = new Set(['/etc/stellwerk/cert.pem', '/etc/stellwerk/key.pem']);
const context = { isReadableFile: (file: string) => files.has(file) };

describe('settings form values', () => {
  it('shows the file’s values under the environment, and marks what the environment fixes', () => {
    const view = settingsView(
      { STELLWERK_MQTT_PORT: '2883' },
      { STELLWERK_HTTP_PORT: '9090', STELLWERK_MQTT_PORT: '1999', STELLWERK_HTTPS: 'self-signed' },
      '/srv/stellwerk',
      '/srv/stellwerk/stellwerk.conf',
    );
    expect(view.values).toEqual({
      httpPort: '9090',
      mqttPort: '2883',
      dataDir: '/srv/stellwerk',
      publicUrl: '',
      https: 'self-signed',
      certFile: '',
      keyFile: '',
    });
    expect(view.fromEnvironment).toEqual(['mqttPort']);
  });

  it('falls back to the server’s defaults and reads certificate files as the HTTPS mode', () => {
    const view = settingsView(
      {},
      { STELLWERK_HTTPS_CERT: '/c.pem', STELLWERK_HTTPS_KEY: '/k.pem' },
      '/d',
      '/d/stellwerk.conf',
    );
    expect(view.values).toMatchObject({
      httpPort: '8080',
      mqttPort: '1883',
      https: 'files',
      certFile: '/c.pem',
    });
    expect(settingsView({}, {}, '/d', '/d/stellwerk.conf').values.https).toBe('off');
  });

  it('shows the HTTPS mode the server will serve', () => {
    const mode = (env: NodeJS.ProcessEnv, conf: Record<string, string>) =>
      settingsView(env, conf, '/d', '/d/stellwerk.conf').values.https;
    const files = { STELLWERK_HTTPS_CERT: '/c.pem', STELLWERK_HTTPS_KEY: '/k.pem' };
    expect(mode({}, { STELLWERK_HTTPS: 'off', ...files })).toBe('off');
    expect(mode({ STELLWERK_HTTPS: 'off' }, files)).toBe('off');
    expect(mode({}, { STELLWERK_HTTPS: 'on', ...files })).toBe('files');
    expect(mode({}, { STELLWERK_HTTPS: ' Self-Signed ' })).toBe('self-signed');
    expect(mode({ STELLWERK_HTTPS: 'off' }, { STELLWERK_HTTPS: 'self-signed' })).toBe('off');
    expect(mode({}, { STELLWERK_HTTPS_KEY: '/k.pem' })).toBe('off');
  });
});

describe('settings validation', () => {
  it('accepts valid values and trims a trailing slash off the public URL', () => {
    const check = checkSettings({ ...VALID, publicUrl: 'https://stellwerk.example.com/' }, context);
    expect(check).toEqual({ ok: true, values: VALID });
  });

  it.each([
    ['httpPort', '0'],
    ['httpPort', '65536'],
    ['httpPort', '80.5'],
    ['mqttPort', ''],
    ['mqttPort', '-1'],
    ['dataDir', 'relative/path'],
    ['publicUrl', 'stellwerk.example.com'],
    ['publicUrl', 'ftp://stellwerk.example.com'],
    ['publicUrl', 'https://user:pw@stellwerk.example.com'],
    ['https', 'on'],
  ] as const)('refuses %s = %j', (field, value) => {
    const check = checkSettings({ ...VALID, [field]: value }, context);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(Object.keys(check.errors)).toEqual([field]);
  });

  it('refuses the same port for HTTP and MQTT', () => {
    expect(checkSettings({ ...VALID, mqttPort: '8080' }, context)).toEqual({
      ok: false,
      errors: { mqttPort: 'must differ from the HTTP port' },
    });
  });

  it('needs readable certificate and key files for HTTPS with own files', () => {
    const missing = checkSettings(
      { ...VALID, https: 'files', certFile: '/etc/stellwerk/cert.pem', keyFile: 'key.pem' },
      context,
    );
    expect(missing).toEqual({ ok: false, errors: { keyFile: 'a full file path' } });
    const unreadable = checkSettings(
      { ...VALID, https: 'files', certFile: '/etc/other.pem', keyFile: '/etc/stellwerk/key.pem' },
      context,
    );
    expect(unreadable).toEqual({ ok: false, errors: { certFile: 'no readable file there' } });
  });

  it('does not check fields the environment fixes', () => {
    expect(checkSettings({ ...VALID, httpPort: '0' }, { ...context, fixed: ['httpPort'] }).ok).toBe(true);
    const files = { ...VALID, https: 'files', certFile: '', keyFile: '' };
    expect(checkSettings(files, { ...context, fixed: ['https'] }).ok).toBe(true);
    expect(checkSettings(files, context).ok).toBe(false);
  });

  it('treats a non-object message from the page as all fields missing', () => {
    const check = checkSettings('STELLWERK_HTTP_PORT=1', context);
    expect(check.ok).toBe(false);
    if (!check.ok)
      expect(Object.keys(check.errors).sort()).toEqual(['dataDir', 'httpPort', 'https', 'mqttPort']);
  });
});

describe('settings to stellwerk.conf', () => {
  it('writes ports and URL, and removes what an empty or switched-off field leaves to the default', () => {
    expect(confChanges({ ...VALID, publicUrl: '' }, [])).toEqual({
      STELLWERK_HTTP_PORT: '8080',
      STELLWERK_MQTT_PORT: '1883',
      STELLWERK_PUBLIC_URL: undefined,
      STELLWERK_HTTPS: undefined,
      STELLWERK_HTTPS_CERT: undefined,
      STELLWERK_HTTPS_KEY: undefined,
    });
  });

  it('writes the HTTPS mode as the server reads it', () => {
    expect(confChanges({ ...VALID, https: 'self-signed' }, [])).toMatchObject({
      STELLWERK_HTTPS: 'self-signed',
      STELLWERK_HTTPS_CERT: undefined,
    });
    expect(
      confChanges({ ...VALID, https: 'files', certFile: '/c.pem', keyFile: '/k.pem' }, []),
    ).toMatchObject({
      STELLWERK_HTTPS: undefined,
      STELLWERK_HTTPS_CERT: '/c.pem',
      STELLWERK_HTTPS_KEY: '/k.pem',
    });
  });

  it('leaves out fields the environment fixes', () => {
    const changes = confChanges(VALID, ['httpPort', 'https']);
    expect(Object.keys(changes).sort()).toEqual(['STELLWERK_MQTT_PORT', 'STELLWERK_PUBLIC_URL']);
  });
});
