import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const refusal = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
};

describe('HTTPS and proxy variables', () => {
  it('serves plain HTTP by default and trusts no proxy', () => {
    expect(loadConfig({})).toMatchObject({
      https: 'off',
      httpRedirectPort: undefined,
      hstsMaxAge: 31_536_000,
      trustProxy: [],
      publicUrl: 'http://localhost:8080',
    });
  });

  it('turns HTTPS on with a certificate file, and makes the default public URL https', () => {
    const config = loadConfig({
      STELLWERK_HTTPS_CERT: 'tls/cert.pem',
      STELLWERK_HTTPS_KEY: 'tls/key.pem',
      STELLWERK_HTTP_PORT: '8443',
    });
    expect(config).toMatchObject({
      https: 'on',
      httpsCert: path.resolve('tls/cert.pem'),
      httpsKey: path.resolve('tls/key.pem'),
      publicUrl: 'https://localhost:8443',
    });
    expect(loadConfig({ STELLWERK_HTTPS: 'self-signed' }).publicUrl).toBe('https://localhost:8080');
    expect(
      loadConfig({ STELLWERK_HTTPS: 'Self-Signed', STELLWERK_PUBLIC_URL: 'https://iot.example' }).publicUrl,
    ).toBe('https://iot.example');
    expect(loadConfig({ STELLWERK_HTTPS: 'off', STELLWERK_HTTPS_CERT: 'c.pem' }).https).toBe('off');
  });

  it.each([
    [{ STELLWERK_HTTPS: 'yes' }, 'STELLWERK_HTTPS', /one of off, on, self-signed/],
    [{ STELLWERK_HTTPS: 'on' }, 'STELLWERK_HTTPS_CERT', /must name a PEM file/],
    [{ STELLWERK_HTTPS_CERT: 'c.pem' }, 'STELLWERK_HTTPS_KEY', /must name a PEM file/],
    [{ STELLWERK_HTTPS: 'self-signed', STELLWERK_HTTPS_KEY: 'k.pem' }, 'STELLWERK_HTTPS', /one or the other/],
    [{ STELLWERK_HTTP_REDIRECT_PORT: '80' }, 'STELLWERK_HTTP_REDIRECT_PORT', /HTTPS, which is off/],
    [
      { STELLWERK_HTTPS: 'self-signed', STELLWERK_HTTP_PORT: '8443', STELLWERK_HTTP_REDIRECT_PORT: '8443' },
      'STELLWERK_HTTP_REDIRECT_PORT',
      /must differ from STELLWERK_HTTP_PORT/,
    ],
    [{ STELLWERK_HSTS_MAX_AGE: '-1' }, 'STELLWERK_HSTS_MAX_AGE', /between/],
  ])('refuses %j, naming %s', (env, variable, message) => {
    const error = refusal(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(message);
  });

  it('takes proxies as addresses, CIDR ranges and named ranges', () => {
    expect(
      loadConfig({ STELLWERK_TRUST_PROXY: ' 10.0.0.5, 192.168.0.0/16,fd00::/8 ,::1, loopback' }).trustProxy,
    ).toEqual(['10.0.0.5', '192.168.0.0/16', 'fd00::/8', '::1', 'loopback']);
    expect(loadConfig({ STELLWERK_TRUST_PROXY: '' }).trustProxy).toEqual([]);
  });

  it.each([
    '*',
    'true',
    'proxy.example',
    '10.0.0.0/33',
    'fd00::/129',
    '10.0.0.0/8/1',
    '10.0.0.0/x',
    '300.1.1.1',
  ])('refuses the proxy entry %j', (entry) => {
    const error = refusal({ STELLWERK_TRUST_PROXY: `127.0.0.1,${entry}` });
    expect(error.variable).toBe('STELLWERK_TRUST_PROXY');
  });
});
