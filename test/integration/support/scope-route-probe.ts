import type { RouteInfo } from '../../../server/src/context.js';
import { randomEui, SCOPE_FIXTURES } from './scope-fixtures.js';
import { uniq, type ScopeWorld } from './scope-world.js';
import { rawBodyOf } from './raw-bodies.js';
import { sampleValue, type JsonSchema } from './schema-sample.js';
import type { TestApp } from './test-app.js';

/**
 * The permission-scope dimension of the route table (scope-isolation.test.ts): every authenticated
 * route is called by a user restricted to one scope.
 *
 * - A route naming an object by `:id` takes a fresh object of its resource kind. Kinds bound to
 *   permission scopes (SCOPED) are tried visible (must succeed) and hidden (must be 404, like a
 *   missing one); the others (UNSCOPED) must simply work for the restricted user.
 * - Routes without `:id` must be listed in ID_LESS; with an `accountId` they act in the scope
 *   world's account and must succeed, without one they must not fail (5xx).
 * - No reply may contain a hidden marker (a south title, id or value: scope-world.ts).
 * EXPECT overrides the status where the rule for restricted users says otherwise, with the reason.
 */

const key = (route: RouteInfo) => `${route.method} ${route.url}`;

/** Resource kinds whose objects are visible only through their permission scope, and why. */
export const SCOPED: Record<string, string> = {
  digitalTwin: 'its effective scope',
  state: 'its twin’s effective scope',
  virtualDevice: 'its scope',
  rule: 'the scopes recorded from its saver, and its twin',
  alarmLog: 'the twin or device it references',
  alarmReport: 'the scopes recorded from its saver',
  exportPlan: 'the scopes recorded from its saver',
  exportJob: 'the scopes recorded from its plan’s saver when it ran',
  integrationFlow: 'the scopes recorded from its saver',
  permissionScope: 'a restricted user sees only its own scopes',
  gateway: 'its scope; its devices heard are those the reader may see',
};

/** Resource kinds not bound to permission scopes, and why they show no twin or device data. */
export const UNSCOPED: Record<string, string> = {
  account: 'tenancy, not scopes, decides',
  announcement: 'a message to an account',
  user: 'users are restricted to scopes themselves; changing one needs seeing as much as it',
  role: 'a set of permissions',
  apiKey: 'keys are never restricted; a restricted user cannot make or change one',
  connector: 'account infrastructure; its logs name the connector’s own events',
  deviceTemplate: 'a definition without data',
  deviceDriver: 'a parser without data',
  job: 'what its creator asked for: imports carry the creator’s scopes, results are counts and row errors of its own file',
  dashboard: 'a grid of the account; twins and states hidden from the reader are left out of its layout',
  publicDashboard:
    'opened by its own key, never by a user: what it shows is fixed by its unrestricted publisher',
  smartGroup: 'a saved filter without data',
  connectorMonitoringRule: 'watches a connector, not twins or devices',
  filter: 'code without data',
  sitePlan: 'an image placed on the map; it names no twin or device',
  transformer: 'code without data',
};

/** Every authenticated route without `:id`, with what it is about. A new one fails until listed. */
export const ID_LESS: Record<string, string> = {
  'GET /xapi/v1/accounts': 'accounts',
  'POST /xapi/v1/accounts': 'accounts',
  'GET /xapi/v1/announcements': 'announcements',
  'POST /xapi/v1/auth/logout': 'the session',
  'GET /api/v1/user': 'the caller',
  'GET /api/v1/session': 'the caller (or no one: signed out)',
  'POST /xapi/v1/users/me/2fa': 'the caller',
  'POST /xapi/v1/users/me/2fa/activate': 'the caller',
  'DELETE /xapi/v1/users/me/2fa': 'the caller',
  'POST /api/v1/user/2fa': 'the caller',
  'POST /api/v1/user/2fa/activate': 'the caller',
  'DELETE /api/v1/user/2fa': 'the caller',
  'GET /xapi/v1/users': 'users',
  'GET /xapi/v1/users/me': 'the caller',
  'POST /xapi/v1/users': 'users',
  'GET /xapi/v1/permissions': 'the permission catalogue',
  'GET /xapi/v1/connector-kinds': 'the connector-kind catalogue',
  'GET /xapi/v1/state-sources': 'the state-source catalogue',
  'GET /xapi/v1/roles': 'roles',
  'POST /xapi/v1/roles': 'roles',
  'GET /xapi/v1/api-keys': 'API keys',
  'POST /xapi/v1/api-keys': 'API keys',
  'GET /xapi/v1/permission-scopes': 'permission scopes',
  'POST /xapi/v1/permission-scopes': 'permission scopes',
  'GET /hub/api/v1/account': 'hub',
  'GET /hub/api/v1/devices': 'hub',
  'GET /xapi/v1/device-drivers': 'drivers',
  'POST /xapi/v1/device-drivers': 'drivers',
  'POST /xapi/v1/device-drivers/test': 'a parser test',
  'GET /xapi/v1/live': 'live push (WebSocket: live-twins.test.ts)',
  'GET /xapi/v1/connectors': 'connectors',
  'POST /xapi/v1/connectors': 'connectors',
  'GET /xapi/v1/jobs': 'jobs',
  'GET /xapi/v1/device-templates': 'templates',
  'POST /xapi/v1/device-templates': 'templates',
  'GET /xapi/v1/virtual-devices': 'devices',
  'GET /xapi/v1/virtual-devices/statistics': 'devices',
  'POST /xapi/v1/virtual-devices': 'devices',
  'POST /xapi/v1/virtual-devices/bulk-edit': 'devices',
  'POST /xapi/v1/virtual-devices/bulk-delete-tags': 'devices',
  'POST /xapi/v1/virtual-devices/import': 'devices',
  'GET /xapi/v1/virtual-devices/active-count': 'devices',
  'GET /xapi/v1/dashboards': 'dashboards',
  'POST /xapi/v1/dashboards': 'dashboards',
  'GET /xapi/v1/digital-twins': 'twins',
  'GET /xapi/v1/digital-twins/statistics': 'twins',
  'POST /xapi/v1/digital-twins': 'twins',
  'POST /xapi/v1/timeseries/query': 'time series',
  'GET /xapi/v1/timeseries/query': 'time series',
  'GET /xapi/v1/alarm-logs': 'alarm entries',
  'POST /xapi/v1/alarm-logs/acknowledge':
    'alarm entries (listed ids or a filter, each checked like a single read)',
  'POST /xapi/v1/alarm-logs/close': 'alarm entries (listed ids or a filter, each checked like a single read)',
  'GET /xapi/v1/smart-groups': 'smart groups',
  'GET /xapi/v1/export-plans': 'export plans',
  'POST /xapi/v1/export-plans': 'export plans',
  'POST /xapi/v1/export-plans/preview': 'the first rows of an export over the caller’s own twins',
  'POST /xapi/v1/smart-groups': 'smart groups',
  'GET /xapi/v1/alarm-reports': 'alarm reports',
  'GET /xapi/v1/connector-monitoring-rules': 'monitoring rules',
  'GET /xapi/v1/rules': 'rules',
  'POST /xapi/v1/rules': 'rules',
  'GET /xapi/v1/integration-flows': 'flows',
  'POST /xapi/v1/integration-flows': 'flows',
  'GET /xapi/v1/filters': 'filters',
  'POST /xapi/v1/filters': 'filters',
  'GET /xapi/v1/transformers': 'transformers',
  'POST /xapi/v1/transformers': 'transformers',
  'POST /xapi/v1/oauth2/mail/authorize': 'a mail connector’s sign-in',
  'GET /maps/*': 'map tiles',
  'GET /xapi/v1/audit-events': 'identity and access changes, which name no twin or device',
  'GET /xapi/v1/gateways': 'gateways',
  'POST /xapi/v1/gateways': 'gateways',
  'GET /xapi/v1/basemaps/:file': 'an uploaded basemap archive (tiles of the site, no twin or device data)',
  'GET /xapi/v1/site-plans': 'site plans (images on the map, no twin or device data)',
  'POST /xapi/v1/site-plans': 'site plans',
  'POST /xapi/v1/gateways/import': 'gateways of a connector (sampled: an unknown connector)',
  'GET /xapi/v1/gateways/unknown': 'gateway EUIs heard, naming no device',
  'GET /xapi/v1/overview': 'counts of devices, connectors, alarms and gateways the caller sees',
};

/** Where the restricted user gets another status than success, and why (`skip`: not called). */
export const EXPECT: Record<string, { status: number | 'skip'; why: string }> = {
  'POST /xapi/v1/auth/logout': { status: 'skip', why: 'would end the probe’s session' },
  'POST /xapi/v1/api-keys': { status: 403, why: 'keys are unrestricted: a restricted user cannot make one' },
  'PUT /xapi/v1/api-keys/:id': { status: 403, why: 'a key sees more than a restricted user' },
  'DELETE /xapi/v1/api-keys/:id': { status: 403, why: 'a key sees more than a restricted user' },
  'POST /xapi/v1/permission-scopes': { status: 403, why: 'it could never see a scope it made' },
  'DELETE /xapi/v1/permission-scopes/:id': { status: 409, why: 'its own scope has users (itself)' },
  'GET /xapi/v1/live': { status: 426, why: 'a plain GET; the WebSocket is probed in live-twins.test.ts' },
  'GET /hub/api/v1/account': { status: 401, why: 'API keys only, and keys are never restricted' },
  'GET /hub/api/v1/devices': { status: 401, why: 'API keys only, and keys are never restricted' },
  'GET /hub/api/v1/devices/:id': { status: 401, why: 'API keys only, and keys are never restricted' },
  'POST /hub/api/v1/devices/:id/data': { status: 401, why: 'API keys only, and keys are never restricted' },
  'POST /xapi/v1/dashboards/:id/public-key': {
    status: 403,
    why: 'a public view is unrestricted: a restricted user cannot publish one',
  },
  'GET /hub/api/v1/public-dashboards/:id': { status: 401, why: 'the dashboard’s key only, never a user' },
  'GET /hub/api/v1/public-dashboards/:id/history': {
    status: 401,
    why: 'the dashboard’s key only, never a user',
  },
  'GET /hub/api/v1/public-dashboards/:id/live': {
    status: 401,
    why: 'the dashboard’s key only, never a user',
  },
};

/** Bodies and query strings the schema alone cannot make valid. */
const EXPORT_DEFINITION = {
  selection: { operator: 'or', conditions: [], states: [] },
  range: { relative: 'lastWeek' },
  timeZone: 'Europe/Berlin',
  shape: { layout: 'points', average: null, address: true, geolocation: true, customProperties: [] },
  format: {
    delimiter: ',',
    decimalSeparator: '.',
    bom: false,
    headerNames: {},
    escapeFormulas: true,
    gzip: false,
  },
};
const BODIES: Record<string, (w: ScopeWorld) => Record<string, unknown>> = {
  'POST /xapi/v1/export-plans': () => ({ title: `probe ${uniq()}`, ...EXPORT_DEFINITION }),
  'PUT /xapi/v1/export-plans/:id': () => ({ title: `probe ${uniq()}`, ...EXPORT_DEFINITION }),
  'POST /xapi/v1/export-plans/preview': () => EXPORT_DEFINITION,
  'POST /xapi/v1/connectors/:id/monitoring-rules': () => ({
    title: `probe ${uniq()}`,
    type: 'no-data',
    params: { windowSeconds: 60 },
  }),
  'POST /xapi/v1/rules': () => ({
    title: `probe ${uniq()}`,
    trigger: { type: 'time', schedule: { intervalSeconds: 3600 } },
    commands: [],
  }),
  'POST /xapi/v1/users': (w) => ({
    email: `probe-${uniq()}@stellwerk.test`,
    permissionScopeIds: [w.scopes.north],
    suppressInvitation: true,
  }),
  'POST /xapi/v1/virtual-devices/import': () => ({ csv: `device_id,title\nprobe-${uniq()},Probe` }),
  'POST /xapi/v1/virtual-devices/bulk-delete-tags': () => ({ tags: ['probe'] }),
  'POST /xapi/v1/virtual-devices/:id/downlinks': () => ({ fPort: 1, bytes: '01' }),
  'POST /xapi/v1/timeseries/query': () => ({ query: TS_QUERY }),
  'POST /xapi/v1/gateways': () => ({ eui: randomEui() }),
  // An id that names nothing: the reply must list it as not found (the world's entries stay open).
  'POST /xapi/v1/alarm-logs/acknowledge': () => ({ ids: [PROBE_ALARM_ID] }),
  'POST /xapi/v1/alarm-logs/close': () => ({ ids: [PROBE_ALARM_ID] }),
};
const PROBE_ALARM_ID = '01900000-0000-7000-8000-00000000a1a1';
const TS_QUERY =
  'SELECT twin.id, twin.title, twin.hierarchy, state.id, count(*) GROUP BY twin.id, twin.title, twin.hierarchy, state.id';
const QUERIES: Record<string, () => Record<string, string>> = {
  'GET /xapi/v1/timeseries/query': () => ({ query: TS_QUERY }),
};

const schemaOf = (route: RouteInfo, part: 'body' | 'querystring' | 'params') =>
  route.schema?.[part] as JsonSchema | undefined;

function accountSelector(route: RouteInfo): 'body' | 'querystring' | undefined {
  for (const part of ['querystring', 'body'] as const)
    if ('accountId' in (schemaOf(route, part)?.properties ?? {})) return part;
  if (route.url === '/xapi/v1/accounts' && route.method === 'POST') return 'body';
  return undefined;
}

async function callRoute(t: TestApp, w: ScopeWorld, route: RouteInfo, id?: string) {
  const params: Record<string, string> = { roleId: w.roleId, flag: 'false' };
  let url = route.url.replace(':id', id ?? '');
  for (const name of Object.keys(schemaOf(route, 'params')?.properties ?? {}))
    if (name !== 'id') url = url.replace(`:${name}`, params[name] ?? 'missing-param-sample');
  const selector = accountSelector(route);
  const query: Record<string, string> = { ...QUERIES[key(route)]?.() };
  let body = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)
    ? (BODIES[key(route)]?.(w) ?? (sampleValue(schemaOf(route, 'body'), 'body') as Record<string, unknown>))
    : undefined;
  if (selector === 'querystring') query.accountId = w.accountId;
  if (selector === 'body')
    body = { ...body, [route.url === '/xapi/v1/accounts' ? 'parentId' : 'accountId']: w.accountId };
  const raw = rawBodyOf(key(route));
  if (raw)
    return t.app.inject({
      method: 'PUT',
      url,
      query,
      headers: { ...w.credentials, 'content-type': raw.type },
      payload: raw.payload,
    });
  return t.app.inject({
    method: route.method as 'GET',
    url: url.replace('*', ''),
    query,
    headers: { ...w.credentials, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

/** Routes the probe must know: every authenticated one. */
export const probedRoutes = (t: TestApp) =>
  t.ctx.routes.filter((r) => r.config.auth !== 'public' && r.config.auth);

/** Routes or kinds the tables do not classify (the test fails on them), and table entries naming no route. */
export function unclassified(t: TestApp): string[] {
  const routes = probedRoutes(t);
  const problems: string[] = [];
  for (const route of routes) {
    if (!route.url.includes(':id')) {
      if (!ID_LESS[key(route)]) problems.push(`${key(route)}: not in ID_LESS`);
    } else if (!SCOPED[route.config.resource ?? ''] && !UNSCOPED[route.config.resource ?? '']) {
      problems.push(
        `${key(route)}: resource kind ${route.config.resource ?? 'undeclared'} is not classified`,
      );
    }
  }
  for (const name of [...Object.keys(ID_LESS), ...Object.keys(EXPECT)])
    if (!routes.some((r) => key(r) === name)) problems.push(`${name}: classified, but not a route`);
  return problems;
}

const ok = (status: number) => status >= 200 && status < 300;

/** Calls every route as the restricted user; returns the violations. */
export async function probeRouteScopes(t: TestApp, w: ScopeWorld): Promise<string[]> {
  const violations: string[] = [];
  const leaks = (name: string, body: string) => {
    const leaked = w.hiddenMarkers.filter((m) => body.includes(m));
    if (leaked.length) violations.push(`${name} names hidden objects: ${leaked.join(', ')}`);
  };
  for (const route of probedRoutes(t)) {
    const name = key(route);
    const expected = EXPECT[name];
    if (expected?.status === 'skip') continue;
    const judge = (
      response: { statusCode: number; body: string },
      what: string,
      want: number | 'ok' | 'no5xx',
    ) => {
      const good =
        want === 'ok'
          ? ok(response.statusCode)
          : want === 'no5xx'
            ? response.statusCode < 500
            : response.statusCode === want;
      if (!good)
        violations.push(
          `${name} ${what} → ${response.statusCode} (want ${want}) ${response.body.slice(0, 160)}`,
        );
    };
    if (!route.url.includes(':id')) {
      const response = await callRoute(t, w, route);
      judge(response, '', expected?.status ?? (accountSelector(route) ? 'ok' : 'no5xx'));
      leaks(name, response.body);
      continue;
    }
    const kind = route.config.resource!;
    const fixture = SCOPE_FIXTURES[kind];
    if (!fixture) {
      violations.push(`${name}: no fixture for ${kind}`);
      continue;
    }
    const visible = await callRoute(t, w, route, await fixture(t, w, false));
    judge(visible, SCOPED[kind] ? 'on a visible object' : '', expected?.status ?? 'ok');
    leaks(name, visible.body);
    const shared = w.shared[kind];
    if (shared && route.method === 'GET') {
      const read = await callRoute(t, w, route, shared);
      judge(read, 'on an object naming hidden ones', 'ok');
      leaks(name, read.body);
    }
    // Unauthenticated for this credential: whether the object is hidden cannot matter.
    if (SCOPED[kind] && expected?.status !== 401) {
      const hidden = await callRoute(t, w, route, await fixture(t, w, true));
      judge(hidden, 'on a hidden object', 404);
    }
  }
  return violations;
}
