import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type Credentials,
  type ListBody,
} from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Who may set an account's OAuth configuration (federated login): only holders of
 * identityProvider.manage, never with a default role above their own, and every change is audited.
 */

interface AccountBody {
  id: string;
  oauthConfig: Record<string, unknown> | null;
}

interface AuditBody {
  action: string;
  actor: { kind: string; id: string | null };
  target: { type: string; id: string } | null;
  details: { changed?: string[]; config?: Record<string, unknown>; from?: boolean; to?: boolean };
}

let t: TestApp;
let adminCreds: Credentials;
let admin: ReturnType<typeof caller>;
let plant: string;

const oauthConfig = (extra: Record<string, unknown> = {}) => ({
  scope: 'openid email',
  auth_uri: 'https://idp.example.test/authorize',
  client_id: 'stellwerk',
  token_uri: 'https://idp.example.test/token',
  redirect_uri: `${t.config.publicUrl}/api/v1/oauth2/callback`,
  client_secret: 'first-secret-value',
  user_info_uri: 'https://idp.example.test/userinfo',
  ...extra,
});

const storedConfig = () =>
  t.withContext(async () => (await t.services.accounts.findById(plant))!.oauthConfig);

beforeAll(async () => {
  t = await createTestApp();
  adminCreds = bearer(await login(t));
  admin = caller(t, adminCreds);
  plant = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Plant' }), 201).id;
});
afterAll(() => t?.close());

describe('identity provider configuration', () => {
  it('refuses account.manage alone: 403 NO_PERMISSION_IDENTITYPROVIDER.MANAGE on update, removal and create', async () => {
    const manager = await userWithPermissions(t, adminCreds, 'Account keeper', ['account.manage'], {
      accountId: plant,
    });
    const call = caller(t, bearer(manager.token));
    for (const body of [{ oauthConfig: oauthConfig() }, { oauthConfig: null }]) {
      const response = await call('PUT', `/xapi/v1/accounts/${plant}`, body);
      expect(response.statusCode, response.body).toBe(403);
      expect(errorCode(response)).toBe('NO_PERMISSION_IDENTITYPROVIDER.MANAGE');
    }
    const created = await call('POST', '/xapi/v1/accounts', { title: 'Sneaky', oauthConfig: oauthConfig() });
    expect(created.statusCode, created.body).toBe(403);
    expect(errorCode(created)).toBe('NO_PERMISSION_IDENTITYPROVIDER.MANAGE');
    expect(await storedConfig()).toBeNull();
    // The rest of the account stays theirs to manage.
    expectStatus(await call('PUT', `/xapi/v1/accounts/${plant}`, { description: 'managed' }), 200);
  });

  it('never lets the configuration hand new users a role above its author', async () => {
    const idp = await userWithPermissions(
      t,
      adminCreds,
      'IdP keeper',
      ['identityProvider.manage', 'account.manage'],
      {
        accountId: plant,
      },
    );
    const call = caller(t, bearer(idp.token));
    // Without default_role new users get AccountReader (all.read), which this author does not hold.
    const reader = await call('PUT', `/xapi/v1/accounts/${plant}`, { oauthConfig: oauthConfig() });
    expect(reader.statusCode, reader.body).toBe(403);
    expect(errorCode(reader)).toBe('NO_PERMISSION_ALL.READ');

    const reading = await userWithPermissions(
      t,
      adminCreds,
      'IdP reader',
      ['identityProvider.manage', 'account.manage', 'all.read'],
      { accountId: plant },
    );
    const readerCall = caller(t, bearer(reading.token));
    const above = await readerCall('PUT', `/xapi/v1/accounts/${plant}`, {
      oauthConfig: oauthConfig({ default_role: 'Administrator' }),
    });
    expect(above.statusCode, above.body).toBe(403);
    expect(errorCode(above)).toBe('NO_PERMISSION_ALL.MANAGE');
    const unknown = await readerCall('PUT', `/xapi/v1/accounts/${plant}`, {
      oauthConfig: oauthConfig({ default_role: 'Superuser' }),
    });
    expect(unknown.statusCode, unknown.body).toBe(422);
    expect(errorCode(unknown)).toBe('OAUTH_DEFAULT_ROLE_NOT_FOUND');
    expect(await storedConfig()).toBeNull();

    const saved = expectStatus<AccountBody>(
      await readerCall('PUT', `/xapi/v1/accounts/${plant}`, { oauthConfig: oauthConfig() }),
      200,
    );
    expect(saved.oauthConfig).toMatchObject({ trust_provider_mfa: false, client_secret: '********' });
    expect(saved.oauthConfig).not.toHaveProperty('author');
    expect((await storedConfig())!.author).toMatchObject({ kind: 'user', id: reading.id });
    expectStatus(await admin('PUT', `/xapi/v1/accounts/${plant}`, { oauthConfig: null }), 200);
  });

  it('refuses a principal restricted to permission scopes', async () => {
    const scope = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/permission-scopes', { title: 'Hall 1', accountId: plant }),
      201,
    );
    const restricted = await userWithPermissions(t, adminCreds, 'Hall admin', ['all.manage'], {
      accountId: plant,
      permissionScopeIds: [scope.id],
    });
    const response = await caller(t, bearer(restricted.token))('PUT', `/xapi/v1/accounts/${plant}`, {
      oauthConfig: oauthConfig(),
    });
    expect(response.statusCode, response.body).toBe(403);
    expect(errorCode(response)).toBe('PERMISSION_SCOPE_RESTRICTED');
  });

  it('writes every change of the identity configuration to the audit log, without secrets', async () => {
    const adminId = (await t.withContext(() => t.services.users.findByEmail('admin@stellwerk.test')))!.id;
    expectStatus(
      await admin('PUT', `/xapi/v1/accounts/${plant}`, {
        oauthConfig: oauthConfig({ trust_provider_mfa: true }),
        mandatoryTwoFactor: true,
      }),
      200,
    );
    expectStatus(
      await admin('PUT', `/xapi/v1/accounts/${plant}`, {
        oauthConfig: oauthConfig({ client_secret: 'second-secret-value', client_id: 'other' }),
      }),
      200,
    );
    expectStatus(await admin('PUT', `/xapi/v1/accounts/${plant}`, { oauthConfig: null }), 200);

    const response = await admin('GET', `/xapi/v1/audit-events?accountId=${plant}&sort=occurredAt`);
    // The earlier tests' changes come first; these are the last four.
    const events = expectStatus<ListBody<AuditBody>>(response, 200).data.slice(-4);
    expect(events.map((e) => e.action)).toEqual([
      'account.mandatoryTwoFactor.change',
      'account.oauthConfig.change',
      'account.oauthConfig.change',
      'account.oauthConfig.remove',
    ]);
    for (const event of events) {
      expect(event.actor).toEqual({ kind: 'user', id: adminId });
      expect(event.target).toEqual({ type: 'account', id: plant });
    }
    expect(events[0]!.details).toEqual({ from: false, to: true });
    expect(events[1]!.details.config).toMatchObject({ client_id: 'stellwerk', trust_provider_mfa: true });
    expect(events[2]!.details.changed).toEqual(['client_id', 'trust_provider_mfa', 'client_secret']);
    expect(response.body).not.toContain('secret-value');
  });
});
