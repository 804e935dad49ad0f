import { expect } from 'vitest';
import { ApiKey } from '../../../server/src/api-keys/api-key.entity.js';
import { Account } from '../../../server/src/accounts/account.entity.js';
import { randomToken, sha256 } from '../../../server/src/platform/crypto/tokens.js';
import { login } from './identity.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, json, type TestApp } from './test-app.js';

/** The four positions an object can have relative to the caller's home account. */
export const RELATIONS = ['own', 'child', 'sibling', 'parent'] as const;
export type Relation = (typeof RELATIONS)[number];

/**
 * root ─ parent ─┬─ own ─ child
 *                └─ sibling
 * The callers live in `own`: a user with the Administrator role (bearer token) and an API key
 * with all.manage, so only tenancy, never a missing permission, can refuse them.
 */
export interface TenancyWorld {
  accounts: Record<Relation, string>;
  rootToken: string;
  credentials: { bearer: Record<string, string>; apiKey: Record<string, string> };
  builtInRoleId: string;
}

export async function buildTenancyWorld(t: TestApp): Promise<TenancyWorld> {
  const rootToken = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
  const createAccount = async (title: string, parentId: string) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: { authorization: `Bearer ${rootToken}` },
      payload: { title, parentId },
    });
    expect(response.statusCode, response.body).toBe(201);
    return json<{ id: string }>(response).id;
  };
  const parent = await createAccount('Parent', t.rootAccountId);
  const own = await createAccount('Own', parent);
  const sibling = await createAccount('Sibling', parent);
  const child = await createAccount('Child', own);

  const email = 'own-admin@stellwerk.test';
  const password = 'own admin password 1';
  const { keyText, roleId } = await t.withContext(async () => {
    const admin = await t.services.roles.builtIn('Administrator');
    const reader = await t.services.roles.builtIn('AccountReader');
    await t.services.users.create({ accountId: own, email, password, roleIds: [admin!.id] });
    const em = t.ctx.em();
    const text = `swk_${randomToken()}`;
    const key = new ApiKey();
    key.account = em.getReference(Account, own);
    key.title = 'isolation test key';
    key.prefix = text.slice(0, 12);
    key.keyHash = sha256(text);
    key.permissions = ['all.manage'];
    await em.persistAndFlush(key);
    return { keyText: text, roleId: reader!.id };
  });
  const bearer = await login(t, email, password);
  return {
    accounts: { own, child, sibling, parent },
    rootToken,
    credentials: { bearer: { authorization: `Bearer ${bearer}` }, apiKey: { 'x-api-key': keyText } },
    builtInRoleId: roleId,
  };
}
