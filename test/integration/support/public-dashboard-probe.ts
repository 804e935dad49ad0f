import type { RouteInfo } from '../../../server/src/context.js';
import { RELATIONS, type Relation, type TenancyWorld } from './tenancy-world.js';
import type { TestApp } from './test-app.js';

/**
 * The tenancy dimension of the public-dashboard routes (auth `dashboardKey`, tenant-isolation.test.ts):
 * a dashboard is published in each account of the tenancy world, showing a twin and state of its
 * own. The key of the own account's dashboard must open every such route for its dashboard and
 * none (401) for another dashboard of the same account or for the child's, sibling's and parent's;
 * no answer may name another dashboard's twin or state. Account credentials open none of them.
 */

const uniq = () => Math.random().toString(36).slice(2, 10);

interface Published {
  dashboardId: string;
  key: string;
  /** Ids and titles only this dashboard shows. */
  markers: string[];
}

export const isPublicDashboardRoute = (route: RouteInfo) => route.config.auth === 'dashboardKey';

/** A published dashboard in `accountId` showing one twin and state of its own (as the root admin); returns its id. */
export async function publishedDashboard(
  t: TestApp,
  rootToken: string,
  accountId: string,
): Promise<Published> {
  const call = async (method: 'POST', url: string, payload?: unknown) => {
    const response = await t.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${rootToken}` },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    if (response.statusCode !== 201) throw new Error(`${url} → ${response.statusCode} ${response.body}`);
    return JSON.parse(response.body) as Record<string, string>;
  };
  const title = `published twin ${uniq()}`;
  const twin = (await call('POST', '/xapi/v1/digital-twins', { title, accountId })).id!;
  const state = (await call('POST', `/xapi/v1/digital-twins/${twin}/states`, { key: 'level' })).id!;
  const widget = {
    id: 'w',
    type: 'gauge',
    x: 0,
    y: 0,
    w: 3,
    h: 3,
    title: '',
    twinId: twin,
    stateIds: [state],
  };
  const dashboardId = (
    await call('POST', '/xapi/v1/dashboards', {
      title: `published ${uniq()}`,
      accountId,
      layout: { version: 1, widgets: [widget] },
    })
  ).id!;
  const { key } = await call('POST', `/xapi/v1/dashboards/${dashboardId}/public-key`);
  return { dashboardId, key: key!, markers: [twin, state, title] };
}

const opened = (route: RouteInfo, status: number) =>
  route.url.endsWith('/live') ? status === 426 : status === 200;

/** Calls every public-dashboard route as described above; returns the violations. */
export async function publicDashboardKeyViolations(t: TestApp, world: TenancyWorld): Promise<string[]> {
  const routes = t.ctx.routes.filter(isPublicDashboardRoute);
  if (routes.length === 0) return ['no public-dashboard routes to probe'];
  const boards = {} as Record<Relation | 'neighbour', Published>;
  for (const relation of RELATIONS)
    boards[relation] = await publishedDashboard(t, world.rootToken, world.accounts[relation]);
  boards.neighbour = await publishedDashboard(t, world.rootToken, world.accounts.own);
  const own = boards.own;
  const others = Object.values(boards).filter((b) => b !== own);
  const violations: string[] = [];
  for (const route of routes) {
    // The history route names a state of the dashboard called (its own, or the other one's).
    const call = (board: Published, headers: Record<string, string>) =>
      t.app.inject({
        method: route.method as 'GET',
        url: route.url.replace(':id', board.dashboardId),
        query: route.url.endsWith('/history') ? { stateId: board.markers[1]! } : {},
        headers,
      });
    const name = `${route.method} ${route.url}`;
    const mine = await call(own, { 'x-api-key': own.key });
    if (!opened(route, mine.statusCode)) violations.push(`${name} refused its own key → ${mine.statusCode}`);
    // The dashboard itself names all it shows; the live socket and the history answer other questions.
    if (route.url.endsWith(':id') && !own.markers.every((m) => mine.body.includes(m)))
      violations.push(`${name} does not show its own dashboard`);
    for (const other of others) {
      const response = await call(other, { 'x-api-key': own.key });
      if (response.statusCode !== 401)
        violations.push(`${name} opened another dashboard → ${response.statusCode}`);
    }
    const leaked = others.flatMap((o) => o.markers).filter((m) => mine.body.includes(m));
    if (leaked.length) violations.push(`${name} names other dashboards’ objects: ${leaked.join(', ')}`);
    for (const [kind, headers] of Object.entries(world.credentials)) {
      const response = await call(own, headers);
      if (response.statusCode !== 401)
        violations.push(`${name} opened with an account ${kind} → ${response.statusCode}`);
    }
  }
  return violations;
}
