import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, json, type TestApp } from './support/test-app.js';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await createTestApp();
  const login = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  expect(login.statusCode).toBe(200);
  token = json<{ token: string }>(login).token;
});
afterAll(() => t.close());

const auth = () => ({ authorization: `Bearer ${token}` });

describe('accounts', () => {
  it('creates a sub-account with a decimal-comma retention and reports its hierarchy level', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: auth(),
      payload: { title: 'Plant North', retentionMonths: '12,5' },
    });
    expect(created.statusCode).toBe(201);
    const body = json<{ id: string; parentId: string; retentionMonths: number }>(created);
    expect(body.retentionMonths).toBe(12.5);
    expect(body.parentId).toBe(t.rootAccountId);

    const one = json<{ hierarchyLevel: number }>(
      await t.app.inject({ url: `/xapi/v1/accounts/${body.id}`, headers: auth() }),
    );
    expect(one.hierarchyLevel).toBe(1);
  });

  it('answers an unauthenticated call with 401 INVALID_TOKEN in the error body', async () => {
    const response = await t.app.inject({ url: '/xapi/v1/accounts' });
    expect(response.statusCode).toBe(401);
    expect(json(response)).toEqual({
      error: { code: 'INVALID_TOKEN', message: expect.any(String) as string, details: [] },
    });
  });
});
