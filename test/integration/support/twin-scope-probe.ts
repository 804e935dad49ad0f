import pg from 'pg';
import type { Principal } from '../../../server/src/auth/principal.js';
import type { RouteInfo } from '../../../server/src/context.js';
import {
  TimeSeriesQueryService,
  type TimeSeriesQueryResult,
} from '../../../server/src/timeseries/query/query.service.js';
import { PostgresTarget } from '../../../server/src/timeseries/targets/postgres.target.js';
import type { TimeSeriesTarget } from '../../../server/src/timeseries/timeseries.types.js';
import { bearer, caller, login, type Credentials } from './identity.js';
import { sql } from './ingest-fixtures.js';
import { sampleValue, type JsonSchema } from './schema-sample.js';
import type { TestApp } from './test-app.js';

/**
 * The permission-scope twin of tenant-isolation.test.ts, generated from the route table: every
 * route naming a twin or a state by `:id` is called by a scope-restricted user against a fresh
 * object below a twin it sees (must succeed) and below one it does not see (must be 404, like an
 * object in an unreachable account). Every GET list route and the time-series query are called
 * too, and must not name a hidden twin, its title or its states. Returns the violations.
 */

export interface ScopeProbe {
  accountId: string;
  /** A user restricted to permission scopes, with the twin permissions. */
  caller: Credentials;
  /** A twin the caller sees; fixtures below it inherit its scope. */
  visibleParentId: string;
  /** A twin the caller does not see; fixtures below it inherit its scope. */
  hiddenParentId: string;
}

const SCOPED_KINDS = new Set(['digitalTwin', 'state']);
const MUST_ANSWER = new Set([
  'GET /xapi/v1/digital-twins',
  'GET /xapi/v1/digital-twins/statistics',
  'GET /xapi/v1/timeseries/query',
  'POST /xapi/v1/timeseries/query',
]);
const uniq = () => Math.random().toString(36).slice(2, 10);
const QUERY =
  'SELECT twin.id, twin.title, twin.hierarchy, state.id, count(*) GROUP BY twin.id, twin.title, twin.hierarchy, state.id';

export async function probeScopedRoutes(t: TestApp, probe: ScopeProbe): Promise<string[]> {
  const admin = caller(t, bearer(await login(t)));
  const as = caller(t, probe.caller);
  /** Everything created below the hidden parent: must never appear in what the caller reads. */
  const hiddenNames: string[] = [];

  const created = async (response: Awaited<ReturnType<typeof admin>>) => {
    if (response.statusCode !== 201) throw new Error(`fixture: ${response.statusCode} ${response.body}`);
    return response.json<{ id: string }>().id;
  };
  const fixture = async (kind: string, hidden: boolean): Promise<string> => {
    const title = `${hidden ? 'hidden' : 'visible'} ${uniq()}`;
    const parentId = hidden ? probe.hiddenParentId : probe.visibleParentId;
    const twinId = await created(
      await admin('POST', '/xapi/v1/digital-twins', { title, parentId, accountId: probe.accountId }),
    );
    let id = twinId;
    if (kind === 'state') {
      id = await created(
        await admin('POST', `/xapi/v1/digital-twins/${twinId}/states`, { key: `k-${uniq()}` }),
      );
      // A point, so a query that ignored scopes would have something to leak.
      await sql(t, "INSERT INTO ts_points (state_id, time, value) VALUES (?, now() - interval '1 hour', 1)", [
        id,
      ]);
    }
    if (hidden) hiddenNames.push(title, twinId, id);
    return id;
  };

  const violations: string[] = [];
  const key = (route: RouteInfo) => `${route.method} ${route.url}`;
  const body = (route: RouteInfo) =>
    ['POST', 'PUT', 'PATCH'].includes(route.method)
      ? (sampleValue(route.schema?.body as JsonSchema | undefined, 'body') as object | undefined)
      : undefined;

  const scopedRoutes = t.ctx.routes.filter((r) => SCOPED_KINDS.has(r.config.resource ?? ''));
  // Twin get/put/delete, address, states list/create, state get/put/delete at least.
  if (scopedRoutes.length < 9) violations.push(`only ${scopedRoutes.length} twin and state routes found`);
  for (const route of scopedRoutes) {
    for (const hidden of [false, true]) {
      const id = await fixture(route.config.resource!, hidden);
      const response = await as(route.method as 'GET', route.url.replace(':id', id), body(route));
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      if (hidden && response.statusCode !== 404)
        violations.push(`${key(route)} on a hidden ${route.config.resource} → ${response.statusCode}`);
      if (!hidden && !ok)
        violations.push(
          `${key(route)} refused a visible ${route.config.resource} → ${response.statusCode} ${response.body.slice(0, 200)}`,
        );
    }
  }

  // Lists (the caller's home account and the probe account) and the query, after all fixtures exist.
  await fixture('state', true);
  const reads: Array<[string, string, object?]> = t.ctx.routes
    // The query needs its text: it is added below.
    .filter((r) => r.method === 'GET' && !r.url.includes(':') && r.config.auth !== 'public')
    .filter((r) => r.url !== '/xapi/v1/timeseries/query')
    .map((r) => {
      const query = r.schema?.querystring as JsonSchema | undefined;
      return [key(r), query?.properties?.accountId ? `${r.url}?accountId=${probe.accountId}` : r.url];
    });
  reads.push([
    'GET /xapi/v1/timeseries/query',
    `/xapi/v1/timeseries/query?accountId=${probe.accountId}&query=${encodeURIComponent(QUERY)}`,
  ]);
  reads.push([
    'POST /xapi/v1/timeseries/query',
    '/xapi/v1/timeseries/query',
    { query: QUERY, accountId: probe.accountId },
  ]);
  for (const name of MUST_ANSWER)
    if (!reads.some(([read]) => read === name)) violations.push(`${name} is not a route (any more)`);
  for (const [name, url, payload] of reads) {
    const response = await as(payload ? 'POST' : 'GET', url, payload);
    if (response.statusCode >= 500) violations.push(`${name} → ${response.statusCode}`);
    // The reads that show twins must answer, or the leak check below would prove nothing.
    if (MUST_ANSWER.has(name) && response.statusCode !== 200)
      violations.push(`${name} → ${response.statusCode} ${response.body.slice(0, 200)}`);
    const leaked = hiddenNames.filter((n) => response.body.includes(n));
    if (leaked.length) violations.push(`${name} names hidden objects: ${leaked.join(', ')}`);
  }
  return violations;
}

/**
 * Runs a query through the in-memory evaluator path: the serving target is a stand-in of kind
 * `influxdb-v1` (named `influx-stand-in`) that reads the points from PostgreSQL.
 */
export async function queryInMemory(
  t: TestApp,
  who: Pick<Principal, 'accountId' | 'permissionScopeIds'>,
  query: string,
): Promise<TimeSeriesQueryResult> {
  const pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 1 });
  try {
    const postgres = new PostgresTarget('postgres', pool);
    const standIn: TimeSeriesTarget = {
      name: 'influx-stand-in',
      kind: 'influxdb-v1',
      write: () => Promise.resolve(),
      readPoints: (filter) => postgres.readPoints(filter),
      health: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
    const reads = {
      servingTarget: () => Promise.resolve(standIn),
      readPoints: standIn.readPoints.bind(standIn),
    };
    const service = new TimeSeriesQueryService(t.ctx.em, t.services.accounts, () => new Date(), reads);
    const principal: Principal = {
      kind: 'user',
      id: 'in-memory probe',
      userId: null,
      apiKeyId: null,
      permissions: new Set(['timeseries.read']),
      sessionId: null,
      ...who,
    };
    return await t.withContext(() => service.run(principal, { query }));
  } finally {
    await pool.end();
  }
}
