import { describe, expect, it } from 'vitest';
import type { StoredOAuthConfig } from '../../accounts/account.entity.js';
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
    expect(providerClient(config(base, { issuer: base }), 's').validatesIdToken).toBe(true);
    expect(providerClient(config(base), 's').validatesIdToken).toBe(false);
    expect(providerClient(config(base, { issuer: base, scope: 'read:user user:email' }), 's').oidc).toBe(
      false,
    );
    expect(hasOpenIdScope('email openid  profile')).toBe(true);
    expect(hasOpenIdScope('openidx')).toBe(false);
  });
});
