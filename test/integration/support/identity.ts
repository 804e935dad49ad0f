import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, json, type TestApp } from './test-app.js';

/** Small request helpers shared by the identity tests (users, roles, API keys, scopes, hub). */

/** A user as the XAPI returns it. */
export interface UserBody {
  id: string;
  accountId: string;
  email: string;
  name: string;
  locale: string;
  active: boolean;
  roleIds: string[];
  roles: Array<{ id: string; name: string }>;
  permissionScopeIds: string[];
  passwordSet: boolean;
  invitationPending: boolean;
  invitation?: { delivery: string; expiresAt: string; link?: string } | null;
}

export interface ListBody<T> {
  data: T[];
  meta: { page: number; pageSize: number; total: number };
}

export type Credentials = { authorization: string } | { 'x-api-key': string };

export const bearer = (token: string): Credentials => ({ authorization: `Bearer ${token}` });
export const apiKey = (key: string): Credentials => ({ 'x-api-key': key });

export async function login(t: TestApp, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: { email, password },
  });
  expect(response.statusCode, response.body).toBe(200);
  return json<{ token: string }>(response).token;
}

/** `call(t, creds)('POST', url, body)`: one injected request with the given credentials. */
export const caller =
  (t: TestApp, credentials: Credentials) =>
  (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method,
      url,
      headers: { ...credentials },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

/** Asserts the status, then returns the parsed body (with the body in the failure message). */
export function expectStatus<T = Record<string, unknown>>(
  response: LightMyRequestResponse,
  status: number,
): T {
  expect(response.statusCode, response.body).toBe(status);
  return (response.body ? json<T>(response) : undefined) as T;
}

export const errorCode = (response: LightMyRequestResponse): string =>
  json<{ error: { code: string } }>(response).error.code;

/**
 * Creates a custom role and a user holding it (with a password) as `admin`; returns the user's
 * id and a bearer token for it.
 */
export async function userWithPermissions(
  t: TestApp,
  admin: Credentials,
  name: string,
  permissions: string[],
  extra: { accountId?: string; permissionScopeIds?: string[] } = {},
): Promise<{ id: string; roleId: string; token: string; email: string }> {
  const call = caller(t, admin);
  const role = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/roles', {
      name: `${name} role`,
      permissions,
      ...(extra.accountId ? { accountId: extra.accountId } : {}),
    }),
    201,
  );
  const email = `${name.toLowerCase().replace(/\W+/g, '-')}@stellwerk.test`;
  const password = `${name} password 123`;
  const user = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/users', { email, name, password, roleIds: [role.id], ...extra }),
    201,
  );
  return { id: user.id, roleId: role.id, token: await login(t, email, password), email };
}

/** Built-in role ids by name, read through the API like a client would. */
export async function builtInRoleIds(call: ReturnType<typeof caller>): Promise<Record<string, string>> {
  const roles = expectStatus<ListBody<{ id: string; name: string; builtIn: boolean }>>(
    await call('GET', '/xapi/v1/roles?pageSize=100'),
    200,
  );
  return Object.fromEntries(roles.data.filter((r) => r.builtIn).map((r) => [r.name, r.id]));
}
