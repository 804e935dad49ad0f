import * as client from 'openid-client';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { StoredOAuthConfig } from '../../accounts/account.entity.js';
import { DialOut } from '../../outgoing/dial/dial-out.js';
import { TargetGuard } from '../../outgoing/target-guard.js';
import {
  assertTransportAllowed,
  hasOpenIdScope,
  identityIssuer,
  isLoopbackHost,
  providerClient,
} from './oidc.client.js';

const config = (base: string, extra: Partial<StoredOAuthConfig> = {}): StoredOAuthConfig => ({
  scope: 'openid email',
  auth_uri: `${base}/auth`,
  token_uri: `${base}/token`,
  user_info_uri: `${base}/userinfo`,
  client_id: 'stellwerk',
  client_secret_sealed: 'sealed',
  redirect_uri: 'https://iot.example.com/api/v1/oauth2/callback',
  ...extra,
});

const dial = new DialOut(new TargetGuard([]), pino({ enabled: false }));

describe('oidc client', () => {
  it('treats only loopback names and addresses as loopback', () => {
    for (const host of ['localhost', '127.0.0.1', '127.8.9.10', '[::1]', '::1'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['example.com', 'foo.localhost', '10.0.0.1', '128.0.0.1', 'localhost.evil.example']) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });

  it('allows plain http only towards loopback hosts', () => {
    expect(assertTransportAllowed(config('https://login.example.com'))).toBe(false);
    expect(assertTransportAllowed(config('http://127.0.0.1:9000'))).toBe(true);
    expect(() => assertTransportAllowed(config('http://keycloak.intranet:8080'))).toThrow(/https/);
    expect(() =>
      assertTransportAllowed(
        config('https://login.example.com', { token_uri: 'http://login.example.com/token' }),
      ),
    ).toThrow(/token_uri/);
  });

  it('keys identities on the configured issuer, else on the userinfo origin', () => {
    expect(
      identityIssuer(
        config('https://kc.example.com/realms/a', { issuer: 'https://kc.example.com/realms/a/' }),
      ),
    ).toBe('https://kc.example.com/realms/a');
    expect(identityIssuer(config('https://github.example.com/login'))).toBe('https://github.example.com');
  });

  it('validates ID tokens only with the openid scope and a configured issuer', () => {
    const base = 'https://login.example.com';
    expect(providerClient(config(base, { issuer: base }), 's', dial).validatesIdToken).toBe(true);
    expect(providerClient(config(base), 's', dial).validatesIdToken).toBe(false);
    expect(
      providerClient(config(base, { issuer: base, scope: 'read:user user:email' }), 's', dial).oidc,
    ).toBe(false);
    expect(hasOpenIdScope('email openid  profile')).toBe(true);
    expect(hasOpenIdScope('openidx')).toBe(false);
  });

  it('never lets openid-client use the global fetch: every call goes through DialOut', async () => {
    for (const extra of [{ issuer: 'https://login.example.com' }, {}, { scope: 'read:user' }]) {
      const { config: configuration } = providerClient(config('http://127.0.0.1:9', extra), 's', dial);
      const fetch = configuration[client.customFetch];
      expect(fetch).toBeTypeOf('function');
      // Refused by the guard (no allowance here) before any connection; openid-client sees a TypeError.
      const failure = await fetch!('http://127.0.0.1:9/token', {
        method: 'POST',
        headers: {},
        body: 'x=1',
        redirect: 'manual',
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TypeError);
      expect((failure as Error).cause).toMatchObject({ code: 'OUTGOING_TARGET_REFUSED' });
    }
  });
});
