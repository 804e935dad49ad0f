import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { configLogFields, configReport, MASK } from './config-report.js';

let dataDir: string;
const writeSettings = (text: string) => fs.writeFileSync(path.join(dataDir, 'stellwerk.conf'), text);
const load = (env: Record<string, string> = {}) => loadConfig({ STELLWERK_DATA_DIR: dataDir, ...env });
const errorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-conf-'));
});
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('settings file', () => {
  it('is optional: without it every value is the environment or the default', () => {
    const config = load({ STELLWERK_HTTP_PORT: '9000' });
    expect(config.origin.settingsFileFound).toBe(false);
    expect(config.origin.settingsFile).toBe(path.join(dataDir, 'stellwerk.conf'));
    expect(config.origin.sources.STELLWERK_HTTP_PORT).toBe('env');
    expect(config.origin.sources.STELLWERK_MQTT_PORT).toBe('default');
  });

  it('reads KEY=value lines with comments, blank lines, spaces and quotes', () => {
    writeSettings(
      [
        '\uFEFF# Stellwerk settings',
        '',
        'STELLWERK_HTTP_PORT = 9090',
        '  STELLWERK_MQTT_PORT=1884  ',
        'STELLWERK_MAIL_FROM="Plant A <iot@plant-a.example>"',
        "STELLWERK_NODE_NAME='node #1'",
        'STELLWERK_ADMIN_EMAIL=admin@plant-a.example\r',
        'STELLWERK_ADMIN_PASSWORD="say \\"hello\\" # not a comment"',
      ].join('\n'),
    );
    const config = load();
    expect(config.origin.settingsFileFound).toBe(true);
    expect(config).toMatchObject({
      httpPort: 9090,
      mqttPort: 1884,
      mailFrom: 'Plant A <iot@plant-a.example>',
      nodeName: 'node #1',
      adminEmail: 'admin@plant-a.example',
      adminPassword: 'say "hello" # not a comment',
    });
    expect(config.origin.sources).toMatchObject({
      STELLWERK_HTTP_PORT: 'file',
      STELLWERK_ADMIN_PASSWORD: 'file',
      STELLWERK_LOG_LEVEL: 'default',
    });
  });

  it('loses to the environment, value by value', () => {
    writeSettings('STELLWERK_HTTP_PORT=9090\nSTELLWERK_MQTT_PORT=1884\n');
    const config = load({ STELLWERK_HTTP_PORT: '7070' });
    expect(config.httpPort).toBe(7070);
    expect(config.mqttPort).toBe(1884);
    expect(config.origin.sources.STELLWERK_HTTP_PORT).toBe('env');
    expect(config.origin.sources.STELLWERK_MQTT_PORT).toBe('file');
  });

  it("feeds defaults that derive from other settings (the public URL from the file's HTTP port)", () => {
    writeSettings('STELLWERK_HTTP_PORT=9090\n');
    expect(load().publicUrl).toBe('http://localhost:9090');
  });

  it.each([
    ['STELLWERK_HTTP_PORTT=80', /line 1 sets STELLWERK_HTTP_PORTT, which is not a Stellwerk setting/],
    ['# ok\nnot a setting', /line 2 is not a setting/],
    [
      'STELLWERK_DATA_DIR=/srv/stellwerk',
      /line 1 sets STELLWERK_DATA_DIR, which only the environment can set/,
    ],
    [
      'STELLWERK_HTTP_PORT=1\n\nSTELLWERK_HTTP_PORT=2',
      /line 3 sets STELLWERK_HTTP_PORT again \(first set on line 1\)/,
    ],
    ['STELLWERK_NODE_NAME="open', /line 1 has a value that opens a " quote/],
  ])('refuses %j, naming the file and line', (text, message) => {
    writeSettings(text);
    const error = errorOf(() => load());
    expect(error.message).toContain(path.join(dataDir, 'stellwerk.conf'));
    expect(error.message).toMatch(message);
  });

  it('names the line of a bad value', () => {
    writeSettings('\nSTELLWERK_HTTP_PORT=eighty\n');
    expect(errorOf(() => load()).message).toBe(
      `Invalid configuration: STELLWERK_HTTP_PORT (${path.join(dataDir, 'stellwerk.conf')} line 2) must be an integer, got "eighty"`,
    );
  });

  it('does not parse a file value that the environment overrides', () => {
    writeSettings('STELLWERK_HTTP_PORT=eighty\n');
    expect(load({ STELLWERK_HTTP_PORT: '8081' }).httpPort).toBe(8081);
  });
});

describe('effective configuration report', () => {
  it('shows every variable with its source and masks secrets', () => {
    writeSettings('STELLWERK_SMTP_URL=smtp://mailer:hunter2hunter2@mail.example:587\n');
    const key = Buffer.alloc(32, 7).toString('base64');
    const config = load({
      DATABASE_URL: 'postgres://stellwerk:db-secret@db.example:5432/stellwerk',
      STELLWERK_ADMIN_EMAIL: 'admin@example.com',
      STELLWERK_ADMIN_PASSWORD: 'correct horse battery',
      STELLWERK_SECRET_KEY: key,
      STELLWERK_TIMESERIES_TARGETS:
        'postgres,influxdb-v2+http://influx.example:8086/?org=o&bucket=b&token=influx-token',
    });
    const rows = Object.fromEntries(configReport(config).map((row) => [row.name, row]));
    expect(rows.DATABASE_URL).toEqual({
      name: 'DATABASE_URL',
      value: `postgres://stellwerk:${MASK}@db.example:5432/stellwerk`,
      source: 'env',
    });
    expect(rows.STELLWERK_SMTP_URL).toMatchObject({
      value: `smtp://mailer:${MASK}@mail.example:587`,
      source: 'file',
    });
    expect(rows.STELLWERK_ADMIN_PASSWORD!.value).toBe(MASK);
    expect(rows.STELLWERK_SECRET_KEY!.value).toBe(MASK);
    // A duration, not a token.
    expect(rows.STELLWERK_TOKEN_TTL_SECONDS!.value).toMatch(/^\d+$/);
    expect(rows.STELLWERK_HTTP_PORT).toMatchObject({ value: '8080', source: 'default' });
    expect(rows.STELLWERK_DATA_DIR).toMatchObject({ value: dataDir, source: 'env' });
    expect(rows.STELLWERK_GEOCODER_URL!.value).toBe('unset');

    const logged = JSON.stringify(configLogFields(config));
    for (const secret of ['db-secret', 'hunter2hunter2', 'correct horse battery', key, 'influx-token']) {
      expect(logged).not.toContain(secret);
    }
    expect(configLogFields(config).STELLWERK_HTTP_PORT).toBe('8080 (default)');
  });
});
