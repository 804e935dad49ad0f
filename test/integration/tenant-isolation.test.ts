import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteInfo } from '../../server/src/context.js';
import {
  ancestorIdLeaks,
  emailEnumerationViolations,
  escalationViolations,
  inheritedObjectLeaks,
} from './support/identity-probes.js';
import { isPublicDashboardRoute, publicDashboardKeyViolations } from './support/public-dashboard-probe.js';
import { rawBodyOf } from './support/raw-bodies.js';
import { sampleValue, type JsonSchema } from './support/schema-sample.js';
import { buildTenancyWorld, RELATIONS, type Relation, type TenancyWorld } from './support/tenancy-world.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';
import { FIXTURE_CODEC_PARSER } from './support/ts013-codecs.js';
import { insertTwin } from './support/twin-fixtures.js';

/**
 * Generated from the server's route table, not hand-picked: every authenticated route is called
 * as a user and as an API key of account `own`, against objects (or an `accountId`) in its own
 * account, its child, its sibling and its parent. Reaching the sibling or the parent fails the
 * test; so does a request that should succeed but does not (the probe would be meaningless).
 */

let t: TestApp;
let world: TenancyWorld;

/** Creates one object of a kind inside the given account (as the root admin); returns its id. */
type Fixture = (accountId: string) => Promise<string>;

const created = (status: number, body: string) => {
  expect(status, body).toBeGreaterThanOrEqual(200);
  expect(status, body).toBeLessThan(300);
  return (JSON.parse(body) as { id: string }).id;
};

const asRoot = (method: 'POST' | 'PUT', url: string, payload: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${world.rootToken}` },
    payload: payload as object,
  });

const uniq = () => Math.random().toString(36).slice(2, 10);

const FIXTURES: Record<string, Fixture> = {
  account: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/accounts', { title: `fixture ${uniq()}`, parentId: accountId });
    return created(r.statusCode, r.body);
  },
  user: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/users', {
      email: `fixture-${uniq()}@stellwerk.test`,
      accountId,
      suppressInvitation: true,
    });
    return created(r.statusCode, r.body);
  },
  role: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/roles', {
      name: `fixture ${uniq()}`,
      permissions: ['user.read'],
      accountId,
    });
    return created(r.statusCode, r.body);
  },
  apiKey: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/api-keys', {
      title: `fixture ${uniq()}`,
      permissions: [],
      accountId,
    });
    return created(r.statusCode, r.body);
  },
  permissionScope: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/permission-scopes', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  // With a connector, so the hub data push (which needs one) can succeed on the device.
  virtualDevice: async (accountId) => {
    // On a connector that delivers downlinks, so the device's downlink routes can succeed.
    const connector = await asRoot('POST', '/xapi/v1/connectors', {
      type: 'mqtt-broker',
      title: 'fx',
      accountId,
    });
    const r = await asRoot('POST', '/xapi/v1/virtual-devices', {
      device_id: `fixture-${uniq()}`,
      title: 'Fixture device',
      accountId,
      connectorId: created(connector.statusCode, connector.body),
    });
    return created(r.statusCode, r.body);
  },
  connector: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/connectors', {
      type: 'webhook-in',
      title: `fixture ${uniq()}`,
      accountId,
    });
    return created(r.statusCode, r.body);
  },
  deviceTemplate: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/device-templates', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  job: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/virtual-devices/import', {
      csv: `device_id,title\nfixture-${uniq()},Imported`,
      accountId,
    });
    return created(r.statusCode, r.body);
  },
  deviceDriver: async (accountId) => {
    // A codec, so that every driver route (the parser test, encoding a downlink) works on its own object.
    const r = await asRoot('POST', '/xapi/v1/device-drivers', {
      title: `fixture ${uniq()}`,
      accountId,
      parser: FIXTURE_CODEC_PARSER,
    });
    return created(r.statusCode, r.body);
  },
  digitalTwin: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/digital-twins', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  dashboard: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/dashboards', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  // The twin row through the ORM, so this fixture does not depend on the twins API.
  state: async (accountId) => {
    const twinId = await insertTwin(t, { accountId, title: `fixture ${uniq()}` });
    const r = await asRoot('POST', `/xapi/v1/digital-twins/${twinId}/states`, { key: `fixture-${uniq()}` });
    return created(r.statusCode, r.body);
  },
  announcement: async (accountId) => {
    const r = await asRoot('POST', `/xapi/v1/accounts/${accountId}/announcements`, {
      title: 'Notice',
      message: 'm',
    });
    return created(r.statusCode, r.body);
  },
  integrationFlow: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/integration-flows', {
      title: `fixture ${uniq()}`,
      source: { type: 'alarms' },
      accountId,
    });
    return created(r.statusCode, r.body);
  },
  filter: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/filters', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  transformer: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/transformers', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  // Alarm entries are written by rules and monitoring, not through the API.
  alarmLog: async (accountId) =>
    (await t.services.alarmLogs.write({ accountId, category: 'fixture', message: `fixture ${uniq()}` })).id,
  connectorMonitoringRule: async (accountId) => {
    const c = await asRoot('POST', '/xapi/v1/connectors', { type: 'webhook-in', title: 'fx', accountId });
    const connectorId = created(c.statusCode, c.body);
    const r = await asRoot(
      'POST',
      `/xapi/v1/connectors/${connectorId}/monitoring-rules`,
      MONITORING_RULE_BODY(),
    );
    return created(r.statusCode, r.body);
  },
  // With its image, so that reading the image can succeed.
  sitePlan: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/site-plans', { title: `fixture ${uniq()}`, accountId });
    const id = created(r.statusCode, r.body);
    const image = rawBodyOf('PUT /xapi/v1/site-plans/:id/image')!.payload.toString('base64');
    const put = await asRoot('PUT', `/xapi/v1/site-plans/${id}/image`, { imageBase64: image });
    return created(put.statusCode, put.body);
  },
  gateway: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/gateways', { eui: randomBytes(8).toString('hex'), accountId });
    return created(r.statusCode, r.body);
  },
  rule: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/rules', { ...RULE_BODY(), accountId });
    return created(r.statusCode, r.body);
  },
  smartGroup: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/smart-groups', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  exportPlan: async (accountId) => {
    const r = await asRoot('POST', '/xapi/v1/export-plans', { title: `fixture ${uniq()}`, accountId });
    return created(r.statusCode, r.body);
  },
  exportJob: async (accountId) => {
    const plan = await asRoot('POST', '/xapi/v1/export-plans', { title: `fixture ${uniq()}`, accountId });
    const r = await asRoot('POST', `/xapi/v1/export-plans/${created(plan.statusCode, plan.body)}/run`, {});
    await t.services.jobs.runner.runOnce();
    return created(r.statusCode, r.body);
  },
  alarmReport: async (accountId) => {
    const group = await asRoot('POST', '/xapi/v1/smart-groups', { title: `fixture ${uniq()}`, accountId });
    const r = await asRoot(
      'POST',
      `/xapi/v1/smart-groups/${created(group.statusCode, group.body)}/alarm-reports`,
      {
        title: `fixture ${uniq()}`,
      },
    );
    return created(r.statusCode, r.body);
  },
};

type Expectation = Record<Relation, 'allow' | 'deny'>;
const DEFAULT: Expectation = { own: 'allow', child: 'allow', sibling: 'deny', parent: 'deny' };

/**
 * Where the rule itself says otherwise. Each entry names why; everything else gets DEFAULT.
 */
const EXPECTATIONS: Record<string, Partial<Expectation>> = {
  // Announcements are inherited downwards: a user dismisses the parent's, never a child's.
  'PUT /xapi/v1/announcements/:id/state': { parent: 'allow', child: 'deny' },
  'GET /xapi/v1/announcements': { parent: 'allow' },
  // Roles of ancestors are readable (and assignable) below; changing them is refused there (INHERITED_ROLE).
  'GET /xapi/v1/roles/:id': { parent: 'allow' },
};

/** Routes that end the caller's own session: probing them would log the probe out (see auth-login.test.ts). */
const SELF_ENDING = new Set(['POST /xapi/v1/auth/logout']);

/** Values for path parameters other than `:id`. */
const PARAMS: Record<string, () => string> = {
  roleId: () => world.builtInRoleId,
  flag: () => 'false',
};

/** Bodies the schema alone cannot make valid. */
const MONITORING_RULE_BODY = () => ({
  title: `probe ${uniq()}`,
  type: 'no-data',
  params: { windowSeconds: 60 },
});
const RULE_BODY = () => ({
  title: `probe ${uniq()}`,
  trigger: { type: 'time', schedule: { intervalSeconds: 3600 } },
  commands: [],
});

const BODIES: Record<string, () => Record<string, unknown>> = {
  'POST /xapi/v1/connectors/:id/monitoring-rules': MONITORING_RULE_BODY,
  'POST /xapi/v1/rules': RULE_BODY,
  'POST /xapi/v1/virtual-devices/import': () => ({ csv: `device_id,title\nprobe-${uniq()},Probe` }),
  'POST /xapi/v1/virtual-devices/bulk-delete-tags': () => ({ tags: ['probe'] }),
  'POST /xapi/v1/virtual-devices/:id/downlinks': () => ({ fPort: 1, bytes: '01' }),
  'POST /xapi/v1/timeseries/query': () => ({ query: 'SELECT twin.title, count(*)' }),
  'POST /xapi/v1/gateways': () => ({ eui: randomBytes(8).toString('hex') }),
  'POST /xapi/v1/export-plans': () => ({ title: `probe ${uniq()}` }),
  'PUT /xapi/v1/export-plans/:id': () => ({ title: `probe ${uniq()}` }),
  'POST /xapi/v1/export-plans/preview': () => ({
    selection: { operator: 'and', conditions: [], states: [] },
    range: { relative: 'lastDay' },
    timeZone: 'UTC',
    shape: { layout: 'points', average: null, address: false, geolocation: false, customProperties: [] },
    format: {
      delimiter: ',',
      decimalSeparator: '.',
      bom: false,
      headerNames: {},
      escapeFormulas: true,
      gzip: false,
    },
  }),
  // Another tenant's ids are covered in alarm-operations.test.ts; here an id naming nothing.
  'POST /xapi/v1/alarm-logs/acknowledge': () => ({ ids: [randomUUID()] }),
  'POST /xapi/v1/alarm-logs/close': () => ({ ids: [randomUUID()] }),
  'PUT /xapi/v1/site-plans/:id/image': () => ({
    imageBase64: rawBodyOf('PUT /xapi/v1/site-plans/:id/image')!.payload.toString('base64'),
  }),
};

/** Query strings the schema alone cannot make valid. */
const QUERIES: Record<string, () => Record<string, string>> = {
  'GET /xapi/v1/timeseries/query': () => ({ query: 'SELECT twin.title, count(*)' }),
};

/** Objects in every account, so lists can be checked for leaks. */
const population: Record<Relation, string[]> = { own: [], child: [], sibling: [], parent: [] };

const key = (route: RouteInfo) => `${route.method} ${route.url}`;
const schemaOf = (route: RouteInfo, part: 'body' | 'querystring' | 'params') =>
  route.schema?.[part] as JsonSchema | undefined;

/** The property through which a route is told which account to act in, if any. */
function accountSelector(route: RouteInfo): { part: 'body' | 'querystring'; name: string } | undefined {
  for (const part of ['querystring', 'body'] as const) {
    const props = schemaOf(route, part)?.properties ?? {};
    if ('accountId' in props) return { part, name: 'accountId' };
    if (route.url === '/xapi/v1/accounts' && part === 'body' && 'parentId' in props)
      return { part, name: 'parentId' };
  }
  return undefined;
}

async function callRoute(
  route: RouteInfo,
  headers: Record<string, string>,
  target: { id?: string; accountId?: string },
) {
  let url = route.url.replace(':id', target.id ?? '');
  for (const name of Object.keys(schemaOf(route, 'params')?.properties ?? {})) {
    if (name !== 'id') url = url.replace(`:${name}`, PARAMS[name]?.() ?? 'missing-param-sample');
  }
  const selector = accountSelector(route);
  const query: Record<string, string> = { ...QUERIES[key(route)]?.() };
  let body = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)
    ? (BODIES[key(route)]?.() ??
      (sampleValue(schemaOf(route, 'body'), 'body') as Record<string, unknown> | undefined))
    : undefined;
  if (selector && target.accountId) {
    if (selector.part === 'querystring') query[selector.name] = target.accountId;
    else body = { ...(body ?? {}), [selector.name]: target.accountId };
  }
  const raw = rawBodyOf(key(route));
  if (raw)
    return t.app.inject({
      method: route.method as 'PUT',
      url,
      query,
      headers: { ...headers, 'content-type': raw.type },
      payload: raw.payload,
    });
  return t.app.inject({
    method: route.method as 'GET',
    url,
    query,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

const isOk = (status: number) => status >= 200 && status < 300;

beforeAll(async () => {
  t = await createTestApp();
  world = await buildTenancyWorld(t);
  for (const relation of RELATIONS) {
    for (const fixture of Object.values(FIXTURES))
      population[relation].push(await fixture(world.accounts[relation]));
  }
}, 120_000);

afterAll(() => t?.close());

describe('tenant isolation (generated from the route table)', () => {
  it('covers every authenticated route and knows every resource kind they name', () => {
    // Public-dashboard routes take a dashboard's key, not an account's: probed below.
    const routes = t.ctx.routes.filter((r) => r.config.auth !== 'public' && !isPublicDashboardRoute(r));
    expect(routes.length).toBeGreaterThan(5);
    const missing = routes
      .filter((r) => r.url.includes(':id'))
      .filter((r) => !r.config.resource || !FIXTURES[r.config.resource])
      .map((r) => `${key(r)} (resource: ${r.config.resource ?? 'undeclared'})`);
    expect(missing, 'routes whose :id kind has no fixture here').toEqual([]);
  });

  for (const credential of ['bearer', 'apiKey'] as const) {
    it(`refuses every route on sibling and parent objects (${credential})`, async () => {
      const violations: string[] = [];
      const headers = world.credentials[credential];
      const above = [world.accounts.parent, t.rootAccountId];
      for (const route of t.ctx.routes.filter(
        (r) => r.config.auth !== 'public' && !SELF_ENDING.has(key(r)) && !isPublicDashboardRoute(r),
      )) {
        const userOnly = route.config.auth === 'user' || route.config.auth === 'enrolment';
        // The hub API takes only API keys; a bearer token is refused (401) before tenancy matters.
        if (route.config.auth === 'hub' && credential === 'bearer') continue;
        const expected = { ...DEFAULT, ...EXPECTATIONS[key(route)] };
        const selector = accountSelector(route);
        const hasId = route.url.includes(':id');

        if (!hasId && !selector) {
          const response = await callRoute(route, headers, {});
          if (response.statusCode >= 500) violations.push(`${key(route)} → ${response.statusCode}`);
          // Only population objects count: the caller's own record legitimately names its parent account.
          const forbidden = [
            ...population.sibling,
            ...(expected.parent === 'allow' ? [] : population.parent),
          ];
          const leaked = route.method === 'GET' ? forbidden.filter((id) => response.body.includes(id)) : [];
          if (leaked.length)
            violations.push(`${key(route)} lists objects of sibling/parent: ${leaked.join(', ')}`);
          violations.push(...ancestorIdLeaks(key(route), response, above, []));
          continue;
        }

        for (const relation of RELATIONS) {
          const target = hasId
            ? { id: await FIXTURES[route.config.resource!]!(world.accounts[relation]) }
            : { accountId: world.accounts[relation] };
          const response = await callRoute(route, headers, target);
          violations.push(
            ...ancestorIdLeaks(`${key(route)} on ${relation}`, response, above, Object.values(target)),
          );
          const want = userOnly && credential === 'apiKey' ? 'deny' : expected[relation];
          if (want === 'deny' && isOk(response.statusCode)) {
            violations.push(`${key(route)} reached a ${relation} object → ${response.statusCode}`);
          }
          if (want === 'allow' && !isOk(response.statusCode)) {
            violations.push(
              `${key(route)} refused its own (${relation}) object → ${response.statusCode} ${response.body.slice(0, 200)}`,
            );
          }
          if (want === 'deny' && response.statusCode !== 404 && response.statusCode !== 403) {
            violations.push(`${key(route)} on ${relation}: expected 404/403, got ${response.statusCode}`);
          }
        }
      }
      expect(violations).toEqual([]);
    }, 300_000);
  }

  it('opens each public-dashboard route with a dashboard’s key for that dashboard only', async () => {
    expect(await publicDashboardKeyViolations(t, world)).toEqual([]);
  }, 60_000);

  it('refuses a lesser principal on every route that grants permissions or sets the identity provider', async () => {
    expect(await escalationViolations(t, world)).toEqual([]);
  }, 120_000);

  it('keeps the owner of inherited objects hidden from the sub-account', async () => {
    expect(await inheritedObjectLeaks(t, world)).toEqual([]);
  });

  it('answers alike for an e-mail taken in the caller’s account and in a sibling tenant', async () => {
    expect(await emailEnumerationViolations(t, world)).toEqual([]);
  });

  it('answers 404 with the error body when a sibling object is addressed by id', async () => {
    const siblingAccount = world.accounts.sibling;
    const response = await t.app.inject({
      url: `/xapi/v1/accounts/${siblingAccount}`,
      headers: world.credentials.bearer,
    });
    expect(response.statusCode).toBe(404);
    expect(json(response)).toEqual({
      error: {
        code: 'NOT_FOUND',
        message: expect.any(String) as string,
        details: expect.any(Array) as unknown[],
      },
    });
  });
});
