import type { LightMyRequestResponse } from 'fastify';
import type { RouteInfo } from '../../../server/src/context.js';
import { caller, userWithPermissions, type Credentials } from './identity.js';
import { sampleValue, type JsonSchema } from './schema-sample.js';
import type { TenancyWorld } from './tenancy-world.js';
import type { TestApp } from './test-app.js';

/**
 * Identity dimensions of the route-table tests (tenant-isolation.test.ts): what a principal of a
 * sub-account may learn about the accounts above it, and who may grant what. Each function walks
 * the server's route table, so a new route that grants permissions or takes an e-mail is probed
 * without being listed here.
 */

const routeKey = (route: RouteInfo) => `${route.method} ${route.url}`;
const bodyProps = (route: RouteInfo) => (route.schema?.body as JsonSchema | undefined)?.properties ?? {};
const paramProps = (route: RouteInfo) => (route.schema?.params as JsonSchema | undefined)?.properties ?? {};
const errorCodeOf = (response: LightMyRequestResponse) => {
  try {
    return response.json<{ error?: { code?: string } }>().error?.code;
  } catch {
    return undefined;
  }
};

/**
 * A response names an account above the caller's (its parent, the root) that the request did not
 * name itself: a sub-account's principal must not learn those ids (parentId, inherited objects'
 * accountId, error details).
 */
export function ancestorIdLeaks(
  label: string,
  response: LightMyRequestResponse,
  above: readonly string[],
  sentIds: ReadonlyArray<string | undefined>,
): string[] {
  const named = above.filter((id) => !sentIds.includes(id) && response.body.includes(id));
  return named.length > 0 ? [`${label} names an account above the caller: ${named.join(', ')}`] : [];
}

/** Routes that hand out permissions or change who can log in; every one must refuse a lesser principal. */
export function grantingRoutes(routes: readonly RouteInfo[]): RouteInfo[] {
  return routes.filter((route) => {
    if (route.config.auth === 'public' || !['POST', 'PUT'].includes(route.method)) return false;
    const body = bodyProps(route);
    return (
      'permissions' in body || 'roleIds' in body || 'oauthConfig' in body || 'roleId' in paramProps(route)
    );
  });
}

interface Attempt {
  label: string;
  as: Credentials;
  method: 'POST' | 'PUT';
  url: string;
  body: Record<string, unknown> | undefined;
  code: string;
}

/**
 * For every granting route: a principal holding the route's permission and all.read (which reads
 * everything, hub API excepted) tries to hand out IotHub.read and all.manage, or to set the
 * account's identity provider; each attempt must be 403 with the permission it lacks.
 */
export async function escalationViolations(t: TestApp, world: TenancyWorld): Promise<string[]> {
  const root: Credentials = { authorization: `Bearer ${world.rootToken}` };
  const asRoot = caller(t, root);
  const own = world.accounts.own;
  const created = async (method: 'POST', url: string, body: Record<string, unknown>) => {
    const response = await asRoot(method, url, body);
    if (response.statusCode !== 201)
      throw new Error(`${url} fixture: ${response.statusCode} ${response.body}`);
    return response.json<{ id: string }>().id;
  };
  const uniq = () => Math.random().toString(36).slice(2, 10);
  const hubRole = await created('POST', '/xapi/v1/roles', {
    name: `hub ${uniq()}`,
    permissions: ['IotHub.read'],
    accountId: own,
  });
  const adminRole = await created('POST', '/xapi/v1/roles', {
    name: `admin ${uniq()}`,
    permissions: ['all.manage'],
    accountId: own,
  });
  const targets: Record<string, () => Promise<string>> = {
    role: () =>
      created('POST', '/xapi/v1/roles', { name: `target ${uniq()}`, permissions: [], accountId: own }),
    apiKey: () =>
      created('POST', '/xapi/v1/api-keys', { title: `target ${uniq()}`, permissions: [], accountId: own }),
    user: () =>
      created('POST', '/xapi/v1/users', {
        email: `target-${uniq()}@stellwerk.test`,
        accountId: own,
        suppressInvitation: true,
      }),
    account: async () => own,
  };
  const lesser = new Map<string, Credentials>();
  const principalFor = async (permissions: string[]) => {
    const name = permissions.join('+');
    if (!lesser.has(name)) {
      const user = await userWithPermissions(t, root, `Lesser ${uniq()}`, permissions, { accountId: own });
      lesser.set(name, { authorization: `Bearer ${user.token}` });
    }
    return lesser.get(name)!;
  };
  const oauthConfig = {
    scope: 'openid email',
    auth_uri: 'https://idp.example.test/authorize',
    client_id: 'probe',
    token_uri: 'https://idp.example.test/token',
    redirect_uri: `${t.config.publicUrl}/api/v1/oauth2/callback`,
    client_secret: 'probe-secret',
    user_info_uri: 'https://idp.example.test/userinfo',
  };

  const routes = grantingRoutes(t.ctx.routes);
  const violations: string[] = [];
  const expected = [
    'POST /xapi/v1/roles',
    'PUT /xapi/v1/roles/:id',
    'POST /xapi/v1/api-keys',
    'PUT /xapi/v1/api-keys/:id',
    'POST /xapi/v1/users',
    'PUT /xapi/v1/users/:id/roles/:roleId',
    'POST /xapi/v1/accounts',
    'PUT /xapi/v1/accounts/:id',
  ];
  const found = routes.map(routeKey);
  for (const k of expected) if (!found.includes(k)) violations.push(`${k} is not recognised as granting`);

  const attempts: Attempt[] = [];
  for (const route of routes) {
    const permission = route.config.permission;
    if (!permission) {
      violations.push(`${routeKey(route)} grants without a route permission`);
      continue;
    }
    const as = await principalFor([permission, 'all.read']);
    let url = route.url;
    if (url.includes(':id')) url = url.replace(':id', await targets[route.config.resource ?? '']!());
    // A fresh sample per attempt: unique names, so no attempt trips over an earlier one's leftovers.
    const body = () =>
      (sampleValue(route.schema?.body as JsonSchema | undefined, 'body') ?? {}) as Record<string, unknown>;
    const props = { ...bodyProps(route), ...paramProps(route) };
    const label = routeKey(route);
    if ('permissions' in props) {
      for (const [grant, code] of [
        ['IotHub.read', 'NO_PERMISSION_IOTHUB.READ'],
        ['all.manage', 'NO_PERMISSION_ALL.MANAGE'],
      ] as const) {
        attempts.push({
          label: `${label} ${grant}`,
          as,
          method: route.method as 'POST',
          url,
          body: { ...body(), permissions: [grant] },
          code,
        });
      }
    }
    if ('roleIds' in props) {
      for (const [role, code] of [
        [hubRole, 'NO_PERMISSION_IOTHUB.READ'],
        [adminRole, 'NO_PERMISSION_ALL.MANAGE'],
      ] as const) {
        attempts.push({
          label: `${label} role`,
          as,
          method: route.method as 'POST',
          url,
          body: { ...body(), roleIds: [role] },
          code,
        });
      }
    }
    if ('roleId' in props) {
      for (const [role, code] of [
        [hubRole, 'NO_PERMISSION_IOTHUB.READ'],
        [adminRole, 'NO_PERMISSION_ALL.MANAGE'],
      ] as const) {
        attempts.push({
          label: `${label} role`,
          as,
          method: route.method as 'PUT',
          url: url.replace(':roleId', role),
          body: undefined,
          code,
        });
      }
    }
    if ('oauthConfig' in props) {
      attempts.push({
        label: `${label} oauthConfig`,
        as,
        method: route.method as 'POST',
        url,
        body: { ...body(), oauthConfig },
        code: 'NO_PERMISSION_IDENTITYPROVIDER.MANAGE',
      });
      // Holding the identity-provider permission is not enough to give federated users a role above one's own.
      const idp = await principalFor([permission, 'identityProvider.manage', 'all.read']).catch(() => null);
      if (!idp) {
        violations.push(`${label}: no principal can hold identityProvider.manage`);
        continue;
      }
      attempts.push({
        label: `${label} default_role`,
        as: idp,
        method: route.method as 'POST',
        url,
        body: { ...body(), oauthConfig: { ...oauthConfig, default_role: 'Administrator' } },
        code: 'NO_PERMISSION_ALL.MANAGE',
      });
    }
  }

  for (const attempt of attempts) {
    const response = await caller(t, attempt.as)(attempt.method, attempt.url, attempt.body);
    const code = errorCodeOf(response);
    if (response.statusCode !== 403 || code !== attempt.code) {
      violations.push(
        `${attempt.label}: expected 403 ${attempt.code}, got ${response.statusCode} ${code ?? response.body.slice(0, 120)}`,
      );
    }
  }
  return violations;
}

/**
 * Every route that creates a user from an e-mail answers alike whether the address belongs to a
 * user of the caller's own account or of a sibling tenant, and never names the sibling.
 */
export async function emailEnumerationViolations(t: TestApp, world: TenancyWorld): Promise<string[]> {
  const root = caller(t, { authorization: `Bearer ${world.rootToken}` });
  const suffix = Math.random().toString(36).slice(2, 10);
  const addresses = { own: `own-${suffix}@stellwerk.test`, sibling: `sibling-${suffix}@stellwerk.test` };
  for (const relation of ['own', 'sibling'] as const) {
    const response = await root('POST', '/xapi/v1/users', {
      email: addresses[relation],
      accountId: world.accounts[relation],
      suppressInvitation: true,
    });
    if (response.statusCode !== 201) throw new Error(`user fixture: ${response.statusCode} ${response.body}`);
  }
  const violations: string[] = [];
  const routes = t.ctx.routes.filter(
    (r) => r.config.auth !== 'public' && r.method === 'POST' && bodyProps(r).email?.format === 'email',
  );
  if (routes.length === 0) violations.push('no route creates users from an e-mail: the probe is stale');
  for (const route of routes) {
    for (const credential of ['bearer', 'apiKey'] as const) {
      const call = caller(t, world.credentials[credential] as Credentials);
      const answers = [];
      for (const email of [addresses.own, addresses.sibling, addresses.sibling.toUpperCase()]) {
        const body = { ...(sampleValue(route.schema?.body as JsonSchema, 'body') as object), email };
        answers.push(await call('POST', route.url, body));
      }
      const label = `${routeKey(route)} (${credential})`;
      const [own, ...foreign] = answers;
      for (const answer of foreign) {
        if (answer.statusCode !== own!.statusCode || answer.body !== own!.body) {
          violations.push(
            `${label}: a sibling's e-mail answers ${answer.statusCode} ${answer.body}, an own one ${own!.statusCode} ${own!.body}`,
          );
        }
        if (answer.body.includes(world.accounts.sibling))
          violations.push(`${label} names the sibling account`);
      }
      if (own!.statusCode < 400) violations.push(`${label} accepted a taken e-mail`);
    }
  }
  return violations;
}

/**
 * Objects a sub-account inherits from above (shared drivers; roles and announcements are in the
 * main probe's fixtures): every list and the object itself, read from below, keep the owner's id hidden.
 */
export async function inheritedObjectLeaks(t: TestApp, world: TenancyWorld): Promise<string[]> {
  const root = caller(t, { authorization: `Bearer ${world.rootToken}` });
  const shared = await root('POST', '/xapi/v1/device-drivers', {
    title: `shared ${Math.random().toString(36).slice(2, 10)}`,
    shared: true,
    accountId: world.accounts.parent,
  });
  if (shared.statusCode !== 201)
    throw new Error(`shared driver fixture: ${shared.statusCode} ${shared.body}`);
  const driverId = shared.json<{ id: string }>().id;
  const above = [world.accounts.parent, t.rootAccountId];
  const violations: string[] = [];
  for (const credential of ['bearer', 'apiKey'] as const) {
    const call = caller(t, world.credentials[credential] as Credentials);
    const reads = [
      `/xapi/v1/device-drivers?accountId=${world.accounts.own}`,
      `/xapi/v1/device-drivers?accountId=${world.accounts.child}`,
      `/xapi/v1/device-drivers/${driverId}`,
    ];
    for (const url of reads) {
      const response = await call('GET', url);
      if (response.statusCode !== 200) violations.push(`GET ${url} (${credential}) → ${response.statusCode}`);
      if (!response.body.includes(driverId))
        violations.push(`GET ${url} (${credential}) misses the shared driver`);
      violations.push(...ancestorIdLeaks(`GET ${url} (${credential})`, response, above, []));
    }
    const change = await call('PUT', `/xapi/v1/device-drivers/${driverId}`, { title: 'mine now' });
    violations.push(...ancestorIdLeaks(`PUT shared driver (${credential})`, change, above, []));
  }
  return violations;
}
