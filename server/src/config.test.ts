import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, defaultDataDir, ENV_VARIABLES, loadConfig } from './config.js';

const configError = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
};

describe('loadConfig defaults', () => {
  it('starts on a fresh machine without any variable', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      dataDir: defaultDataDir({}),
      httpHost: '0.0.0.0',
      httpPort: 8080,
      mqttPort: 1883,
      pgPort: 5433,
      databaseUrl: undefined,
      publicUrl: 'http://localhost:8080',
      adminEmail: undefined,
      adminPassword: undefined,
      logLevel: 'info',
      bodyLimitBytes: 1_048_576,
      heartbeatIntervalMs: 10_000,
      nodeFaultyAfterMs: 10_000,
      secretKey: undefined,
    });
    expect(config.nodeName).toBe(`${os.hostname()}-${process.pid}`);
  });

  it('gives every variable a default, and every variable a distinct name and key', () => {
    const config = loadConfig({}) as unknown as Record<string, unknown>;
    for (const v of ENV_VARIABLES) {
      expect(v.key in config, v.name).toBe(true);
      if (v.defaultText !== 'unset' && !v.defaultText.startsWith('unset:') && v.key !== 'secretKey') {
        expect(config[v.key], v.name).toBeDefined();
      }
      expect(v.description.length, v.name).toBeGreaterThan(10);
    }
    expect(new Set(ENV_VARIABLES.map((v) => v.name)).size).toBe(ENV_VARIABLES.length);
    expect(new Set(ENV_VARIABLES.map((v) => v.key)).size).toBe(ENV_VARIABLES.length);
  });

  it('derives the public URL from the HTTP port', () => {
    expect(loadConfig({ STELLWERK_HTTP_PORT: '9090' }).publicUrl).toBe('http://localhost:9090');
    expect(loadConfig({ STELLWERK_PUBLIC_URL: 'https://iot.example.com/' }).publicUrl).toBe(
      'https://iot.example.com',
    );
  });

  it('accepts port 0 (pick a free port) and resolves the data directory', () => {
    const config = loadConfig({
      STELLWERK_HTTP_PORT: '0',
      STELLWERK_PG_PORT: '0',
      STELLWERK_DATA_DIR: 'data',
    });
    expect(config.httpPort).toBe(0);
    expect(config.pgPort).toBe(0);
    expect(config.dataDir).toBe(path.resolve('data'));
  });
});

describe('loadConfig bad values', () => {
  it.each([
    ['STELLWERK_HTTP_PORT', 'eighty'],
    ['STELLWERK_HTTP_PORT', '65536'],
    ['STELLWERK_MQTT_PORT', '-1'],
    ['STELLWERK_PG_PORT', ''],
    ['STELLWERK_LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://db/stellwerk'],
    ['DATABASE_URL', 'not a url'],
    ['STELLWERK_PUBLIC_URL', 'ftp://example.com'],
    ['STELLWERK_DATA_DIR', '  '],
    ['STELLWERK_BODY_LIMIT_BYTES', '10'],
    ['STELLWERK_RATE_LIMIT_MAX', '0'],
    ['STELLWERK_SECRET_KEY', Buffer.alloc(16).toString('base64')],
  ])('%s=%j stops the start with a message naming the variable', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.variable).toBe(name);
    expect(error.message).toContain(name);
  });

  it('names the first bad variable when several are bad', () => {
    expect(configError({ STELLWERK_HTTP_PORT: 'x', STELLWERK_LOG_LEVEL: 'loud' }).variable).toBe(
      'STELLWERK_HTTP_PORT',
    );
  });
});

describe('loadConfig number parsing', () => {
  it.each(['8080.5', '8080,5', '1e3', '0x50', '80 80'])('refuses %j for an integer variable', (value) => {
    const error = configError({ STELLWERK_HTTP_PORT: value });
    expect(error.variable).toBe('STELLWERK_HTTP_PORT');
    expect(error.message).toMatch(/must be an integer/);
  });

  it('accepts surrounding blanks and checks the range after parsing', () => {
    expect(loadConfig({ STELLWERK_HTTP_PORT: ' 8081 ' }).httpPort).toBe(8081);
    expect(configError({ STELLWERK_SHUTDOWN_GRACE_MS: '600001' }).message).toMatch(/between 0 and 600000/);
  });

  it('takes a 32-byte base64 secret key', () => {
    const key = Buffer.alloc(32, 7);
    expect(loadConfig({ STELLWERK_SECRET_KEY: key.toString('base64') }).secretKey).toEqual(key);
  });
});

describe('first admin from the environment', () => {
  const email = 'Admin@Example.com';
  const password = 'twelve chars!';

  it('needs e-mail and password together', () => {
    expect(configError({ STELLWERK_ADMIN_PASSWORD: password }).variable).toBe('STELLWERK_ADMIN_EMAIL');
    expect(configError({ STELLWERK_ADMIN_EMAIL: email }).variable).toBe('STELLWERK_ADMIN_PASSWORD');
  });

  it('normalises the e-mail address and keeps the password as given', () => {
    const config = loadConfig({ STELLWERK_ADMIN_EMAIL: ` ${email} `, STELLWERK_ADMIN_PASSWORD: password });
    expect(config.adminEmail).toBe('admin@example.com');
    expect(config.adminPassword).toBe(password);
  });

  it('refuses a malformed e-mail and a short password', () => {
    expect(configError({ STELLWERK_ADMIN_EMAIL: 'admin', STELLWERK_ADMIN_PASSWORD: password }).variable).toBe(
      'STELLWERK_ADMIN_EMAIL',
    );
    const short = configError({ STELLWERK_ADMIN_EMAIL: email, STELLWERK_ADMIN_PASSWORD: 'short' });
    expect(short.variable).toBe('STELLWERK_ADMIN_PASSWORD');
    expect(short.message).toMatch(/12 characters/);
  });

  it('treats empty values as unset', () => {
    const config = loadConfig({ STELLWERK_ADMIN_EMAIL: '', STELLWERK_ADMIN_PASSWORD: '' });
    expect(config.adminEmail).toBeUndefined();
    expect(config.adminPassword).toBeUndefined();
  });
});

describe('defaultDataDir', () => {
  it('uses ProgramData on Windows', () => {
    expect(defaultDataDir({ PROGRAMDATA: 'D:\\Data' }, 'win32')).toBe('D:\\Data\\Stellwerk');
    expect(defaultDataDir({}, 'win32')).toBe('C:\\ProgramData\\Stellwerk');
  });

  it('uses Application Support on macOS', () => {
    expect(defaultDataDir({}, 'darwin', 501)).toBe(
      path.posix.join(os.homedir(), 'Library', 'Application Support', 'Stellwerk'),
    );
  });

  it('uses /var/lib/stellwerk for root on Linux, where the postgres user can enter it', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/root/.local/share' }, 'linux', 0)).toBe('/var/lib/stellwerk');
  });

  it('uses the XDG data folder for other users on Linux', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/data/me' }, 'linux', 1000)).toBe('/data/me/stellwerk');
    expect(defaultDataDir({}, 'linux', 1000)).toBe(
      path.posix.join(os.homedir(), '.local', 'share', 'stellwerk'),
    );
  });
});

describe('loadConfig cluster mode', () => {
  it('is off without STELLWERK_REDIS_URL and on with it and DATABASE_URL', () => {
    expect(loadConfig({}).redisUrl).toBeUndefined();
    const config = loadConfig({
      STELLWERK_REDIS_URL: 'redis://127.0.0.1:6379/0',
      DATABASE_URL: 'postgres://stellwerk@127.0.0.1:5432/stellwerk',
    });
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379/0');
  });

  it('refuses Redis without a shared database, and a URL that is not Redis', () => {
    const alone = configError({ STELLWERK_REDIS_URL: 'redis://127.0.0.1:6379/0' });
    expect(alone.message).toMatch(/STELLWERK_REDIS_URL.*DATABASE_URL/);
    const wrong = configError({
      STELLWERK_REDIS_URL: 'http://127.0.0.1:6379',
      DATABASE_URL: 'postgres://stellwerk@127.0.0.1:5432/stellwerk',
    });
    expect(wrong.message).toMatch(/STELLWERK_REDIS_URL.*redis:/);
  });
});
