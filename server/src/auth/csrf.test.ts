import { describe, expect, it } from 'vitest';
import { needsCsrfProof } from './csrf.js';

describe('needsCsrfProof', () => {
  it('asks it of every state-changing request the cookie authenticates, whatever the prefix', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const route of ['/xapi/v1/connectors/:id/deactivate', '/api/v1/user/2fa', '/anything/else']) {
        expect(needsCsrfProof({ method, route, credential: 'cookie' })).toBe(true);
      }
    }
  });

  it('asks it of every state-changing console route, also without a cookie (login CSRF)', () => {
    expect(needsCsrfProof({ method: 'POST', route: '/api/v1/auth/login', credential: null })).toBe(true);
    expect(needsCsrfProof({ method: 'DELETE', route: '/api/v1/user/2fa', credential: 'bearer' })).toBe(true);
  });

  it('spares safe methods and header credentials outside the console API', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS'])
      expect(needsCsrfProof({ method, route: '/api/v1/user', credential: 'cookie' })).toBe(false);
    expect(needsCsrfProof({ method: 'POST', route: '/xapi/v1/accounts', credential: 'bearer' })).toBe(false);
    expect(needsCsrfProof({ method: 'POST', route: '/hub/api/devices', credential: 'apiKey' })).toBe(false);
    expect(needsCsrfProof({ method: 'POST', route: '/xapi/v1/webhooks/:token', credential: null })).toBe(
      false,
    );
  });
});
