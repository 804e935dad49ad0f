import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, errorCode, expectStatus, login, type Credentials } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;
let plant: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  plant = expectStatus<{ id: string }>(
    await caller(t, admin)('POST', '/xapi/v1/accounts', { title: 'Hub Plant' }),
    201,
  ).id;
});
afterAll(() => t.close());

const keyWith = async (permissions: string[], extra: Record<string, unknown> = {}) =>
  expectStatus<{ id: string; key: string }>(
    await caller(t, admin)('POST', '/xapi/v1/api-keys', {
      title: `hub ${permissions.join(' ')}`,
      permissions,
      accountId: plant,
      ...extra,
    }),
    201,
  );

const hubAccount = (headers: Record<string, string>) => t.app.inject({ url: '/hub/api/v1/account', headers });

describe('hub API keys', () => {
  it.each([['IotHub.manage'], ['IotHub.read'], ['all.manage'], ['iothub.READ']])(
    'accepts a key holding %s',
    async (permission) => {
      const { key } = await keyWith([permission]);
      const body = expectStatus<{ id: string; title: string }>(await hubAccount({ 'x-api-key': key }), 200);
      expect(body).toEqual({ id: plant, title: 'Hub Plant' });
    },
  );

  it('refuses a key with other permissions only: 403 NO_PERMISSION_IOTHUB.READ', async () => {
    for (const permissions of [
      ['VirtualDevice.read'],
      ['all.read'],
      ['virtualDevice.manage', 'Integration.manage'],
      [],
    ]) {
      const { key } = await keyWith(permissions);
      const response = await hubAccount({ 'x-api-key': key });
      expect(response.statusCode).toBe(403);
      expect(errorCode(response)).toBe('NO_PERMISSION_IOTHUB.READ');
    }
  });

  it('refuses a bearer token without a key, no credentials, unknown and inactive keys with 401', async () => {
    const token = (admin as { authorization: string }).authorization;
    const inactive = await keyWith(['IotHub.manage'], { active: false });
    const cases: Array<Record<string, string>> = [
      { authorization: token },
      {},
      { 'x-api-key': 'swk_not-a-real-key' },
      { 'x-api-key': inactive.key },
    ];
    for (const headers of cases) {
      const response = await hubAccount(headers);
      expect(response.statusCode).toBe(401);
      expect(errorCode(response)).toBe('INVALID_TOKEN');
    }
  });
});
