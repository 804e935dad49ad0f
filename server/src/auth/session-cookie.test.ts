import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { consoleCookiePolicy, sessionCookiePolicy } from './session-cookie.js';

function countingLogger(): { log: FastifyBaseLogger; warnings: () => number } {
  let warnings = 0;
  const log = { warn: () => void warnings++ } as unknown as FastifyBaseLogger;
  return { log, warnings: () => warnings };
}

describe('sessionCookiePolicy', () => {
  it('uses the __Host- Secure cookie on https and on loopback http', () => {
    for (const url of [
      'https://iot.example.com',
      'http://localhost:8080',
      'http://127.0.0.1:3000',
      'http://[::1]:8080',
    ]) {
      const { log, warnings } = countingLogger();
      expect(sessionCookiePolicy(url, log)).toEqual({ name: '__Host-stellwerk_session', secure: true });
      expect(warnings()).toBe(0);
    }
  });

  it('falls back to a plain cookie on other plain-http hosts and warns', () => {
    const { log, warnings } = countingLogger();
    expect(sessionCookiePolicy('http://10.1.2.3:8080', log)).toEqual({
      name: 'stellwerk_session',
      secure: false,
    });
    expect(warnings()).toBe(1);
  });
});

describe('consoleCookiePolicy', () => {
  const request = (protocol: 'http' | 'https', hostname: string) =>
    ({ protocol, hostname }) as FastifyRequest;
  const secure = { name: '__Host-stellwerk_session', secure: true };
  const plain = { name: 'stellwerk_session', secure: false };

  it('with the default loopback URL: Secure on https and loopback names, plain elsewhere, warning once', () => {
    const { log, warnings } = countingLogger();
    const policy = consoleCookiePolicy('http://localhost:8080', log);
    expect(policy(request('http', 'localhost'))).toEqual(secure);
    expect(policy(request('http', '127.0.0.1'))).toEqual(secure);
    expect(policy(request('http', '::1'))).toEqual(secure);
    expect(policy(request('https', 'iot.plant.example'))).toEqual(secure);
    expect(warnings()).toBe(0);
    expect(policy(request('http', '192.0.2.10'))).toEqual(plain);
    expect(policy(request('http', 'iot.plant.example'))).toEqual(plain);
    expect(warnings()).toBe(1);
  });

  it('an https public URL keeps the Secure cookie for every request', () => {
    const policy = consoleCookiePolicy('https://iot.plant.example', countingLogger().log);
    expect(policy(request('http', '192.0.2.10'))).toEqual(secure);
  });
});
