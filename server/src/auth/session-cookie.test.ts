import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { sessionCookiePolicy } from './session-cookie.js';

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
